"""Concurrent Enqueue calls share INSERT statements.

While a statement runs, the calls that arrive wait together and go in the next one, so a burst of
single-task Enqueues costs a few statements and commits instead of one each; a call that finds
nothing running goes at once, so nothing waits on purpose.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from taskqueue.clock import Clock
from taskqueue.domain import EnqueueOutcome, NewTask
from taskqueue.storage.database import Database
from taskqueue.storage.tasks_enqueue import enqueue_tasks

_Waiting = tuple[Sequence[NewTask], "asyncio.Future[list[EnqueueOutcome]]"]


class EnqueueBatcher:
    def __init__(self, db: Database, clock: Clock, max_batch: int, max_in_flight: int = 2) -> None:
        self._db = db
        self._clock = clock
        self._max_batch = max_batch
        self._max_in_flight = max_in_flight  # statements at once; keeps pool connections for leases
        self._waiting: list[_Waiting] = []
        self._in_flight = 0

    async def enqueue(self, tasks: Sequence[NewTask]) -> list[EnqueueOutcome]:
        future: asyncio.Future[list[EnqueueOutcome]] = asyncio.get_running_loop().create_future()
        self._waiting.append((tasks, future))
        if self._in_flight < self._max_in_flight:
            self._in_flight += 1
            asyncio.get_running_loop().create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        try:
            while self._waiting:
                group: list[_Waiting] = []
                size = 0
                while self._waiting and (not group or size + len(self._waiting[0][0]) <= self._max_batch):
                    tasks, future = self._waiting.pop(0)
                    group.append((tasks, future))
                    size += len(tasks)
                await self._insert(group)
        finally:
            self._in_flight -= 1

    async def _insert(
        self, group: list[tuple[Sequence[NewTask], asyncio.Future[list[EnqueueOutcome]]]]
    ) -> None:
        merged = [task for tasks, _ in group for task in tasks]
        try:
            outcomes = await enqueue_tasks(self._db, merged, self._clock.now())
        except BaseException as e:
            for _, future in group:
                if not future.done():
                    future.set_exception(e)
            if not isinstance(e, Exception):
                raise
            return
        start = 0
        for tasks, future in group:
            if not future.done():  # the caller may have gone away (cancelled call)
                future.set_result(outcomes[start : start + len(tasks)])
            start += len(tasks)
