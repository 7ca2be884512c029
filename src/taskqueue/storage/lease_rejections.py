"""Why a Heartbeat, Complete or Fail was not applied: a clear, specific message per task."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from taskqueue.domain import LeaseRef, TaskId
from taskqueue.errors import LeaseLost, NotFound, TaskQueueError
from taskqueue.storage.database import Connection
from taskqueue.storage.queries import QUERIES


async def explain_rejections(
    conn: Connection, refs: Sequence[LeaseRef], now: datetime | None
) -> dict[TaskId, TaskQueueError]:
    """For reports that matched no live lease, say what happened to each task instead."""
    if not refs:
        return {}
    cur = await conn.execute(QUERIES["task_lease_state"], {"ids": [r.task_id for r in refs]})
    state = {row[0]: row[1:] for row in await cur.fetchall()}
    errors: dict[TaskId, TaskQueueError] = {}
    for ref in refs:
        if ref.task_id not in state:
            errors[ref.task_id] = NotFound(f"task {ref.task_id} not found")
            continue
        status, lease_id, expires_at = state[ref.task_id]
        if status == "leased" and lease_id != ref.lease_id:
            why = "the task was leased again by another worker"
        elif status == "leased":
            why = f"the lease expired at {expires_at.isoformat()}"
        elif status == "queued":
            why = "the lease expired and the task went back to the queue"
        else:
            why = f"the task is already {status}"
        errors[ref.task_id] = LeaseLost(
            f"lease lost: lease {ref.lease_id} on task {ref.task_id} is no longer valid ({why})"
        )
    return errors
