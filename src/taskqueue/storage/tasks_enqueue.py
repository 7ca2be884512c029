"""Insert a batch of tasks in one statement, resolving idempotency keys."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from taskqueue.domain import EnqueueOutcome, NewTask, TaskId
from taskqueue.errors import AlreadyExists, Unavailable
from taskqueue.storage.database import Connection, Database
from taskqueue.storage.queries import QUERIES
from taskqueue.storage.task_ids import new_task_ids

# A key can vanish between the insert and the lookup only if an operator purges the task meanwhile.
_MAX_ROUNDS = 3


async def enqueue_tasks(db: Database, tasks: Sequence[NewTask], now: datetime | None) -> list[EnqueueOutcome]:
    """Insert the tasks; a task whose (queue, idempotency_key) exists yields the existing task,
    or AlreadyExists when that task has another type or payload."""
    outcomes: dict[int, EnqueueOutcome] = {}
    pending = list(range(len(tasks)))
    # Autocommit: task_insert_batch commits the tasks and their notification in one statement.
    async with db.connection() as conn:
        for _ in range(_MAX_ROUNDS):
            ids = new_task_ids(len(pending))
            cur = await conn.execute(
                QUERIES["task_insert_batch"],
                {"now": now, "tasks": _as_json(ids, [tasks[i] for i in pending])},
            )
            inserted_ids = {row[0] for row in await cur.fetchall()}
            conflicts = []
            for i, task_id in zip(pending, ids, strict=True):
                if task_id in inserted_ids:
                    outcomes[i] = EnqueueOutcome(task_id=task_id, created=True)
                else:
                    conflicts.append(i)
            pending = await _resolve_existing(conn, tasks, conflicts, outcomes) if conflicts else []
            if not pending:
                return [outcomes[i] for i in range(len(tasks))]
    raise Unavailable("idempotency keys kept changing during enqueue; retry")


def _as_json(ids: list[TaskId], tasks: Sequence[NewTask]) -> str:
    """The batch as one JSON document for task_insert_batch (payloads are already valid JSON text)."""
    dumps = json.dumps
    rows = []
    for task_id, t in zip(ids, tasks, strict=True):
        run_at = "null" if t.run_at is None else repr(t.run_at.timestamp())
        key = "null" if t.idempotency_key is None else dumps(t.idempotency_key)
        rows.append(
            f'["{task_id}",{dumps(t.queue)},{dumps(t.type)},{t.payload_json},{t.priority},{run_at},'
            f"{t.delay.total_seconds()!r},{t.max_attempts},{t.timeout.total_seconds()!r},"
            f"{t.backoff_base.total_seconds()!r},{key},{t.backoff_cap.total_seconds()!r}]"
        )
    return "[" + ",".join(rows) + "]"


async def _resolve_existing(
    conn: Connection,
    tasks: Sequence[NewTask],
    conflicts: list[int],
    outcomes: dict[int, EnqueueOutcome],
) -> list[int]:
    """Fill outcomes for tasks whose key exists; return those whose existing task vanished."""
    batch = [tasks[i] for i in conflicts]
    cur = await conn.execute(
        QUERIES["task_find_by_keys"],
        {
            "queues": [t.queue for t in batch],
            "keys": [t.idempotency_key for t in batch],
            "types": [t.type for t in batch],
            "payloads": [t.payload_json for t in batch],
        },
    )
    found = {int(row[0]): row[1:] for row in await cur.fetchall()}
    missing = []
    for position, i in enumerate(conflicts, start=1):
        if position not in found:
            missing.append(i)
            continue
        task = tasks[i]
        task_id, same_type, same_payload = found[position]
        error = None
        if not (same_type and same_payload):
            what = "payload" if same_type else "type"
            error = AlreadyExists(
                f"idempotency key {task.idempotency_key!r} in queue {task.queue!r} is already "
                f"used by task {task_id} with a different {what}"
            )
        outcomes[i] = EnqueueOutcome(task_id=task_id, created=False, error=error)
    return missing
