"""Task ids are valid UUIDv7 values that increase in creation order (FIFO tie-break)."""

from __future__ import annotations

import itertools
import time

from taskqueue.storage.task_ids import new_task_ids


def test_ids_are_version_7_and_strictly_increasing() -> None:
    ids = new_task_ids(10_000) + new_task_ids(10)
    assert all(i.version == 7 and i.variant == "specified in RFC 4122" for i in ids)
    assert all(a < b for a, b in itertools.pairwise(ids))


def test_ids_carry_the_creation_time() -> None:
    before = time.time_ns() // 1_000_000
    [task_id] = new_task_ids(1)
    assert before <= task_id.int >> 80 <= before + 1000
