"""Lease ready tasks and extend live leases."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from taskqueue.domain import (
    FinishOutcome,
    HeartbeatOutcome,
    LeasedTask,
    LeaseOrder,
    LeaseRef,
    TaskStatus,
)
from taskqueue.storage.database import Database
from taskqueue.storage.lease_rejections import explain_rejections
from taskqueue.storage.queries import QUERIES
from taskqueue.storage.ready_notifications import notify_ready


async def lease_available(db: Database, order: LeaseOrder, now: datetime | None) -> list[LeasedTask]:
    """Lease up to order.max_tasks ready tasks, each with a fresh lease id (the fencing token)."""
    async with db.connection() as conn:
        cur = await conn.execute(
            QUERIES["task_lease_available"],
            {
                "now": now,
                "queues": list(order.queues),
                "any_type": not order.task_types,
                "types": list(order.task_types),
                "limit": order.max_tasks,
                "worker_id": order.worker_id,
                "lease_duration": order.lease_duration,
            },
        )
        rows = await cur.fetchall()
    # UPDATE ... RETURNING does not keep the dequeue order: hand out higher priorities first.
    rows.sort(key=lambda row: -row[9])
    return [LeasedTask(*row) for row in rows]


async def heartbeat(
    db: Database, refs: Sequence[LeaseRef], lease_duration: timedelta, now: datetime | None
) -> list[HeartbeatOutcome]:
    """Extend the leases the caller still holds; explain the others."""
    async with db.connection() as conn:
        cur = await conn.execute(
            QUERIES["task_heartbeat_if_leased"],
            {
                "now": now,
                "ids": [r.task_id for r in refs],
                "lease_ids": [r.lease_id for r in refs],
                "lease_duration": lease_duration,
            },
        )
        extended = {row[0]: row[1:] for row in await cur.fetchall()}
        rejected = [r for r in refs if r.task_id not in extended]
        errors = await explain_rejections(conn, rejected, now)
    outcomes = []
    for ref in refs:
        if ref.task_id in extended:
            expires_at, cancel_requested = extended[ref.task_id]
            outcomes.append(HeartbeatOutcome(ref.task_id, expires_at, cancel_requested))
        else:
            outcomes.append(HeartbeatOutcome(ref.task_id, error=errors[ref.task_id]))
    return outcomes


async def release(db: Database, refs: Sequence[LeaseRef], now: datetime | None) -> list[FinishOutcome]:
    """Give leases back without counting the attempt; explain the ones not held any more."""
    async with db.transaction() as conn:
        cur = await conn.execute(
            QUERIES["task_release_if_leased"],
            {"now": now, "ids": [r.task_id for r in refs], "lease_ids": [r.lease_id for r in refs]},
        )
        rows = await cur.fetchall()
        await notify_ready(conn, ((queue, run_at) for _, queue, run_at in rows))
        released = {row[0] for row in rows}
        errors = await explain_rejections(conn, [r for r in refs if r.task_id not in released], now)
    return [
        FinishOutcome(r.task_id, new_status=TaskStatus.QUEUED)
        if r.task_id in released
        else FinishOutcome(r.task_id, error=errors[r.task_id])
        for r in refs
    ]
