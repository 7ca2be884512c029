"""Use case: producers enqueue tasks, read them and cancel them."""

from __future__ import annotations

from collections.abc import Sequence

from taskqueue.clock import Clock
from taskqueue.domain import EnqueueOutcome, NewTask, TaskId, TaskView
from taskqueue.enqueue_batching import EnqueueBatcher
from taskqueue.storage.database import Database
from taskqueue.storage.tasks_admin import cancel_task
from taskqueue.storage.tasks_read import get_task


class Producing:
    def __init__(self, db: Database, clock: Clock, max_batch: int) -> None:
        self._db = db
        self._clock = clock
        self._batcher = EnqueueBatcher(db, clock, max_batch)

    async def enqueue(self, tasks: Sequence[NewTask]) -> list[EnqueueOutcome]:
        return await self._batcher.enqueue(tasks)

    async def get(self, task_id: TaskId) -> TaskView:
        return await get_task(self._db, task_id, self._clock.now())

    async def cancel(self, task_id: TaskId) -> TaskView:
        """Cancel a queued task now; flag a leased one for its worker; refuse a finished one."""
        await cancel_task(self._db, task_id, self._clock.now())
        return await get_task(self._db, task_id, self._clock.now())
