"""Read tasks: one with its history, pages of them, and per-queue counts."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from taskqueue.domain import (
    Attempt,
    PageCursor,
    QueueStats,
    TaskFilter,
    TaskId,
    TaskPage,
    TaskStatus,
    TaskView,
)
from taskqueue.errors import NotFound
from taskqueue.storage.database import Database
from taskqueue.storage.queries import QUERIES


def _task_view(row: tuple[Any, ...], history: tuple[Attempt, ...] = ()) -> TaskView:
    """A row of task_get or task_list (same columns, in TaskView's order) -> TaskView."""
    (task_id, queue, type_, payload, priority, status, attempts, max_attempts, run_at, timeout) = row[:10]
    (key, last_error, result, cancel_requested, lease_owner, lease_expires_at) = row[10:16]
    (created_at, updated_at, started_at, finished_at) = row[16:20]
    return TaskView(
        task_id,
        queue,
        type_,
        payload,
        priority,
        TaskStatus(status),
        attempts,
        max_attempts,
        run_at,
        timeout,
        key,
        last_error,
        result,
        cancel_requested,
        lease_owner,
        lease_expires_at,
        created_at,
        updated_at,
        started_at,
        finished_at,
        history,
    )


def task_filter_params(f: TaskFilter) -> dict[str, object]:
    return {
        "queue": f.queue,
        "type": f.type,
        "status": str(f.status) if f.status else None,
        "error_contains": f.error_contains,
        "created_after": f.created_after,
        "created_before": f.created_before,
    }


async def get_task(db: Database, task_id: TaskId, now: datetime | None) -> TaskView:
    async with db.connection() as conn:
        cur = await conn.execute(QUERIES["task_get"], {"id": task_id, "now": now})
        row = await cur.fetchone()
        if row is None:
            raise NotFound(f"task {task_id} not found")
        cur = await conn.execute(QUERIES["task_attempts_of"], {"id": task_id})
        history = [Attempt(*r) for r in await cur.fetchall()]
    task = _task_view(row)
    # task_attempts holds the attempts that failed or expired; the running attempt and the
    # successful one live in the task row itself.
    if task.status is TaskStatus.LEASED and task.started_at and task.lease_owner:
        history.append(Attempt(task.attempts, task.lease_owner, task.started_at, None, "running", None))
    elif task.status is TaskStatus.SUCCEEDED and task.started_at and task.lease_owner:
        ended = task.finished_at
        history.append(Attempt(task.attempts, task.lease_owner, task.started_at, ended, "succeeded", None))
    return _task_view(row, tuple(history))


async def list_tasks(
    db: Database, task_filter: TaskFilter, limit: int, cursor: PageCursor | None, now: datetime | None
) -> TaskPage:
    params = task_filter_params(task_filter) | {
        "now": now,
        "limit": limit + 1,  # one more tells whether there is a next page
        "cursor_created_at": cursor.created_at if cursor else None,
        "cursor_id": cursor.task_id if cursor else None,
    }
    async with db.connection() as conn:
        cur = await conn.execute(QUERIES["task_list"], params)
        rows = await cur.fetchall()
    tasks = tuple(_task_view(r) for r in rows[:limit])
    more = len(rows) > limit
    next_cursor = PageCursor(tasks[-1].created_at, tasks[-1].id) if more and tasks else None
    return TaskPage(tasks, next_cursor)


async def queue_stats(db: Database, queue: str | None, now: datetime | None) -> list[QueueStats]:
    async with db.connection() as conn:
        cur = await conn.execute(QUERIES["queue_stats"], {"queue": queue, "now": now})
        return [QueueStats(*row) for row in await cur.fetchall()]
