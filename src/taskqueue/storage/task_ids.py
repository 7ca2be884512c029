"""Time-ordered task ids (UUIDv7 layout, RFC 9562).

Tasks enqueued in one batch share run_at, and the dequeue order breaks ties by id: time-ordered
ids make that tie-break first-in, first-out, and keep primary-key inserts at the index's right edge.
"""

from __future__ import annotations

import os
import threading
import time
from uuid import UUID

_lock = threading.Lock()
_last_ms = 0
_seq = 0


def new_task_ids(count: int) -> list[UUID]:
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
            rand_b = int.from_bytes(os.urandom(8)) & ((1 << 62) - 1)
            value = (_last_ms << 80) | (0x7 << 76) | (_seq << 64) | (0b10 << 62) | rand_b
            ids.append(UUID(int=value))
    return ids
