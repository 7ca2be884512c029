"""Checks a battery's history: nothing acknowledged is lost, no stale worker's result stands,
nothing runs after it succeeded, the dead are exactly those that earned it."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Execution:
    event: str  # start, end (returned a result) or fail (raised)
    task_id: str
    attempt: int
    lease_id: str
    pid: int
    at: float


@dataclass
class TaskRow:
    id: str
    status: str
    attempts: int
    max_attempts: int
    lease_id: str | None
    result: Any
    finished_at: float | None  # epoch seconds
    history: list[tuple[str, str | None]]  # (outcome, error) of the failed and expired attempts


@dataclass
class Verdict:
    tasks: int = 0
    lost: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    stale_overwrites: list[str] = field(default_factory=list)
    ran_after_success: list[str] = field(default_factory=list)
    wrongly_dead: list[str] = field(default_factory=list)
    wrongly_alive: list[str] = field(default_factory=list)
    exhausted_by_faults: int = 0  # tasks meant to succeed that used every attempt on expired leases
    duplicate_executions: int = 0  # runs beyond the planned failures and one success (at-least-once)
    outcomes: Counter[str] = field(default_factory=Counter)

    @property
    def ok(self) -> bool:
        return not (
            self.lost or self.unfinished or self.stale_overwrites or self.ran_after_success
            or self.wrongly_dead or self.wrongly_alive
        )  # fmt: skip

    def summary(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "lost": len(self.lost),
            "unfinished": len(self.unfinished),
            "stale_overwrites": len(self.stale_overwrites),
            "ran_after_success": len(self.ran_after_success),
            "wrongly_dead": len(self.wrongly_dead),
            "wrongly_alive": len(self.wrongly_alive),
            "exhausted_by_faults": self.exhausted_by_faults,
            "duplicate_executions": self.duplicate_executions,
            "final_statuses": dict(self.outcomes),
            "examples": {
                name: getattr(self, name)[:5]
                for name in ("lost", "unfinished", "stale_overwrites", "ran_after_success", "wrongly_dead",
                             "wrongly_alive")
                if getattr(self, name)
            },
        }  # fmt: skip


def read_executions(folder: Path) -> list[Execution]:
    out = []
    for path in folder.glob("*.log"):
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 6:  # a line cut short by SIGKILL is simply incomplete
                event, task_id, attempt, lease_id, pid, at = parts
                out.append(Execution(event, task_id, int(attempt), lease_id, int(pid), float(at)))
    return out


def check(
    acknowledged: dict[str, dict[str, Any]], rows: dict[str, TaskRow], executions: list[Execution]
) -> Verdict:
    """acknowledged: task id -> the payload the producer sent and the server acknowledged."""
    verdict = Verdict(tasks=len(acknowledged))
    by_task: defaultdict[str, list[Execution]] = defaultdict(list)
    for e in executions:
        by_task[e.task_id].append(e)
    for task_id, payload in acknowledged.items():
        row = rows.get(task_id)
        if row is None:
            verdict.lost.append(task_id)
            continue
        verdict.outcomes[row.status] += 1
        if row.status not in ("succeeded", "dead"):
            verdict.unfinished.append(task_id)
            continue
        runs = by_task.get(task_id, [])
        starts = [e for e in runs if e.event == "start"]
        planned_failures = len({e.lease_id for e in runs if e.event == "fail"})
        # Executions the task did not need: beyond its planned failures and its one success.
        needed = planned_failures + (1 if row.status == "succeeded" else 0)
        verdict.duplicate_executions += max(0, len({e.lease_id for e in starts}) - needed)
        if row.status == "succeeded":
            # The stored result must come from the lease the task finished under, and that lease
            # must have been the one the row records: a late result of an older lease is a stale overwrite.
            if not isinstance(row.result, dict) or row.result.get("lease_id") != row.lease_id:
                verdict.stale_overwrites.append(task_id)
            if row.finished_at is not None and any(e.at > row.finished_at + 0.001 for e in starts):
                verdict.ran_after_success.append(task_id)
            if payload["kind"] in ("fail", "permanent"):
                verdict.wrongly_alive.append(task_id)
        else:  # dead
            outcomes = [outcome for outcome, _ in row.history]
            permanent = any(err and "planned permanent failure" in err for _, err in row.history)
            spent = row.attempts >= row.max_attempts and len(outcomes) >= row.max_attempts
            if not (permanent or spent):
                verdict.wrongly_dead.append(task_id)
            elif payload["kind"] in ("ok", "flaky") and not permanent:
                failed_for_real = sum(1 for o in outcomes if o == "failed")
                if payload["kind"] == "ok" and failed_for_real:
                    verdict.wrongly_dead.append(task_id)
                else:
                    verdict.exhausted_by_faults += 1
    return verdict
