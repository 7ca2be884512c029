"""Time-ordered task ids (UUIDv7 layout, RFC 9562), as canonical text.

Tasks enqueued in one batch share run_at, and the dequeue order breaks ties by id: time-ordered
ids make that tie-break first-in, first-out, and keep primary-key inserts at the index's right edge.
"""

from __future__ import annotations

import random
import threading
import time

from taskqueue.domain import TaskId

_lock = threading.Lock()
_last_ms = 0
_seq = 0
# Ids need to be unique, not secret: the 62 random bits beside the millisecond and the counter
# come from the (per-process, urandom-seeded) Mersenne Twister, far cheaper than a syscall per id.
_random = random.Random()


def new_task_ids(count: int) -> list[TaskId]:
    """`count` ids, strictly increasing within this process."""
    global _last_ms, _seq
    ids = []
    with _lock:
        for _ in range(count):
            ms = time.time_ns() // 1_000_000
            if ms > _last_ms:
                _last_ms, _seq = ms, 0
            else:
                _seq += 1
                if _seq > 0xFFF:  # 12-bit counter exhausted in this millisecond: borrow the next one
                    _last_ms, _seq = _last_ms + 1, 0
            value = (_last_ms << 80) | (0x7 << 76) | (_seq << 64) | (0b10 << 62) | _random.getrandbits(62)
            h = f"{value:032x}"
            ids.append(f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
    return ids
