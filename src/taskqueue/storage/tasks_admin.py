"""Operator changes: cancel a task, requeue dead letters, purge finished tasks."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from taskqueue.domain import TaskFilter, TaskId, TaskStatus
from taskqueue.errors import Conflict, NotFound
from taskqueue.storage.database import Database
from taskqueue.storage.queries import QUERIES
from taskqueue.storage.ready_notifications import notify_ready
from taskqueue.storage.tasks_read import task_filter_params


class _DryRun(Exception):
    """Raised inside a transaction to roll back a dry run after counting what it would change."""


async def cancel_task(db: Database, task_id: TaskId, now: datetime | None) -> None:
    async with db.connection() as conn:
        cur = await conn.execute(QUERIES["task_cancel"], {"id": task_id, "now": now})
        if await cur.fetchone() is not None:
            return
        cur = await conn.execute(QUERIES["task_lease_state"], {"ids": [task_id]})
        row = await cur.fetchone()
    if row is None:
        raise NotFound(f"task {task_id} not found")
    raise Conflict(f"task {task_id} is already {row[1]}; only queued or leased tasks can be cancelled")


async def requeue_dead(
    db: Database,
    task_ids: Sequence[TaskId] | None,
    task_filter: TaskFilter,
    limit: int | None,
    dry_run: bool,
    now: datetime | None,
) -> list[TaskId]:
    """Requeue dead tasks by id (those not dead are skipped) or by filter; returns the ids.

    A dry run executes the very same statement and rolls it back, so its answer is exact."""
    requeued: list[TaskId] = []
    try:
        async with db.transaction() as conn:
            if task_ids is not None:
                cur = await conn.execute(QUERIES["dead_requeue_by_ids"], {"ids": list(task_ids), "now": now})
            else:
                params = task_filter_params(task_filter) | {"limit": limit, "now": now}
                cur = await conn.execute(QUERIES["dead_requeue_by_filter"], params)
            rows = await cur.fetchall()
            requeued = [row[0] for row in rows]
            if dry_run:
                raise _DryRun
            await notify_ready(conn, ((queue, at) for _, queue, at in rows))
    except _DryRun:
        pass
    return requeued


async def purge_tasks(db: Database, task_filter: TaskFilter, dry_run: bool) -> int:
    """Delete finished tasks with task_filter.status matching the filter; returns the count."""
    assert task_filter.status in (TaskStatus.SUCCEEDED, TaskStatus.DEAD, TaskStatus.CANCELLED)
    count = 0
    try:
        async with db.transaction() as conn:
            cur = await conn.execute(QUERIES["task_purge"], task_filter_params(task_filter))
            row = await cur.fetchone()
            count = int(row[0]) if row else 0
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    return count
