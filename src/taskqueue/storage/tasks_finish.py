"""Apply Complete and Fail reports, only under a live lease (fencing)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from taskqueue.domain import (
    Completion,
    Failure,
    FailureDecision,
    FailureFacts,
    FinishOutcome,
    LeaseRef,
    TaskId,
    TaskStatus,
)
from taskqueue.storage.database import Database
from taskqueue.storage.lease_rejections import explain_rejections
from taskqueue.storage.queries import QUERIES
from taskqueue.storage.ready_notifications import notify_ready

# The retry policy, injected by the use case: storage applies decisions, it does not make them.
Decide = Callable[[Failure, FailureFacts], FailureDecision]


def _as_json(completions: Sequence[Completion]) -> str:
    """One JSON document for the batch; ids are validated UUID text and results valid JSON."""
    rows = [f'["{c.task_id}","{c.lease_id}",{c.result_json or "null"}]' for c in completions]
    return "[" + ",".join(rows) + "]"


async def complete_if_leased(
    db: Database, completions: Sequence[Completion], now: datetime | None
) -> list[FinishOutcome]:
    async with db.connection() as conn:
        cur = await conn.execute(
            QUERIES["task_complete_if_leased"],
            {"now": now, "items": _as_json(completions)},
        )
        done = {row[0] for row in await cur.fetchall()}
        rejected = [LeaseRef(c.task_id, c.lease_id) for c in completions if c.task_id not in done]
        errors = await explain_rejections(conn, rejected, now)
    return [
        FinishOutcome(c.task_id, new_status=TaskStatus.SUCCEEDED)
        if c.task_id in done
        else FinishOutcome(c.task_id, error=errors[c.task_id])
        for c in completions
    ]


async def fail_if_leased(
    db: Database, failures: Sequence[Failure], decide: Decide, now: datetime | None
) -> list[FinishOutcome]:
    """Lock the tasks still under the caller's lease, let `decide` pick each outcome, apply it."""
    async with db.transaction() as conn:
        cur = await conn.execute(
            QUERIES["task_lock_for_failure"],
            {
                "now": now,
                "ids": [f.task_id for f in failures],
                "lease_ids": [f.lease_id for f in failures],
            },
        )
        facts = {row[0]: FailureFacts(*row[1:]) for row in await cur.fetchall()}
        live = [f for f in failures if f.task_id in facts]
        decisions = [decide(f, facts[f.task_id]) for f in live]
        applied: dict[TaskId, tuple[str, datetime]] = {}
        if live:
            cur = await conn.execute(
                QUERIES["task_fail_locked"],
                {
                    "now": now,
                    "ids": [f.task_id for f in live],
                    "statuses": [str(d.status) for d in decisions],
                    "delays": [d.delay for d in decisions],
                    "errors": [f.error for f in live],
                },
            )
            rows = await cur.fetchall()
            applied = {task_id: (status, run_at) for task_id, _, status, run_at in rows}
            await notify_ready(conn, ((q, at) for _, q, status, at in rows if status == "queued"))
        rejected = [LeaseRef(f.task_id, f.lease_id) for f in failures if f.task_id not in facts]
        errors = await explain_rejections(conn, rejected, now)
    outcomes = []
    for f in failures:
        if f.task_id in applied:
            status, run_at = applied[f.task_id]
            # A retry waits out its backoff: to the caller the task is scheduled, not ready.
            new_status = TaskStatus.SCHEDULED if status == "queued" else TaskStatus(status)
            outcomes.append(FinishOutcome(f.task_id, new_status=new_status, next_run_at=run_at))
        else:
            outcomes.append(FinishOutcome(f.task_id, error=errors[f.task_id]))
    return outcomes
