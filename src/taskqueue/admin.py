"""Use case: what operators do (list, requeue dead letters, purge, queue stats)."""

from __future__ import annotations

from collections.abc import Sequence

from taskqueue.clock import Clock
from taskqueue.domain import PageCursor, QueueStats, TaskFilter, TaskId, TaskPage
from taskqueue.storage.database import Database
from taskqueue.storage.tasks_admin import purge_tasks, requeue_dead
from taskqueue.storage.tasks_read import list_tasks, queue_stats


class Admin:
    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def list_tasks(self, task_filter: TaskFilter, limit: int, cursor: PageCursor | None) -> TaskPage:
        return await list_tasks(self._db, task_filter, limit, cursor, self._clock.now())

    async def requeue_dead(
        self,
        task_ids: Sequence[TaskId] | None,
        task_filter: TaskFilter,
        limit: int | None,
        dry_run: bool,
    ) -> list[TaskId]:
        return await requeue_dead(self._db, task_ids, task_filter, limit, dry_run, self._clock.now())

    async def purge(self, task_filter: TaskFilter, dry_run: bool) -> int:
        return await purge_tasks(self._db, task_filter, dry_run)

    async def queue_stats(self, queue: str | None) -> list[QueueStats]:
        return await queue_stats(self._db, queue, self._clock.now())
