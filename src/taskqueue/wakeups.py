"""Wake long-polling Lease calls when their queue has a ready task, without a connection each.

Waiters are asyncio events keyed by queue. The notification listener calls `task_ready` for each
"queue Q has a task ready at T" message; tasks due later (delays, retry backoff) are remembered in
a bounded heap and woken by one timer. Anything missed is caught by the waiters' backup poll.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

# Beyond this many future wake-ups we forget the latest; the backup poll covers them.
_MAX_SCHEDULED = 10_000


class ReadyWakeups:
    def __init__(self) -> None:
        self._waiters: defaultdict[str, set[asyncio.Event]] = defaultdict(set)
        self._scheduled: list[tuple[float, str]] = []
        self._timer: asyncio.TimerHandle | None = None

    @contextmanager
    def subscribe(self, queues: Iterable[str]) -> Iterator[asyncio.Event]:
        """An event set whenever one of `queues` may have a ready task."""
        event = asyncio.Event()
        queues = tuple(queues)
        for queue in queues:
            self._waiters[queue].add(event)
        try:
            yield event
        finally:
            for queue in queues:
                waiting = self._waiters.get(queue)
                if waiting is not None:
                    waiting.discard(event)
                    if not waiting:
                        del self._waiters[queue]

    def task_ready(self, queue: str, at_epoch: float) -> None:
        delay = at_epoch - time.time()
        if delay <= 0:
            self._wake(queue)
            return
        if len(self._scheduled) >= _MAX_SCHEDULED:
            return
        heapq.heappush(self._scheduled, (at_epoch, queue))
        if self._scheduled[0] == (at_epoch, queue):
            self._arm_timer()

    def wake_all(self) -> None:
        """After a lost connection or at shutdown: every waiter looks at the table again."""
        for waiting in self._waiters.values():
            for event in waiting:
                event.set()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.wake_all()

    def _wake(self, queue: str) -> None:
        for event in self._waiters.get(queue, ()):
            event.set()

    def _arm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        delay = max(0.0, self._scheduled[0][0] - time.time())
        self._timer = asyncio.get_running_loop().call_later(delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        now = time.time()
        while self._scheduled and self._scheduled[0][0] <= now:
            _, queue = heapq.heappop(self._scheduled)
            self._wake(queue)
        if self._scheduled:
            self._arm_timer()
