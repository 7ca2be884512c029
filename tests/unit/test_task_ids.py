"""Task ids are valid UUIDv7 values that increase in creation order (FIFO tie-break)."""

from __future__ import annotations

import itertools
import time
from uuid import UUID

from taskqueue.storage.task_ids import new_task_ids


def test_ids_are_canonical_version_7_and_strictly_increasing() -> None:
    ids = new_task_ids(10_000) + new_task_ids(10)
    parsed = [UUID(i) for i in ids]
    assert all(str(u) == i for u, i in zip(parsed, ids, strict=True))  # canonical text form
    assert all(u.version == 7 and u.variant == "specified in RFC 4122" for u in parsed)
    assert all(a < b for a, b in itertools.pairwise(parsed))


def test_ids_carry_the_creation_time() -> None:
    before = time.time_ns() // 1_000_000
    [task_id] = new_task_ids(1)
    assert before <= UUID(task_id).int >> 80 <= before + 1000
