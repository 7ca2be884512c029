"""Python values <-> protobuf messages: task specs, task views, JSON payloads, times."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from taskqueue_proto.v1 import taskqueue_pb2 as pb

Seconds = float | timedelta

_STATUS_NAMES = {
    pb.TASK_STATUS_QUEUED: "queued",
    pb.TASK_STATUS_SCHEDULED: "scheduled",
    pb.TASK_STATUS_LEASED: "leased",
    pb.TASK_STATUS_SUCCEEDED: "succeeded",
    pb.TASK_STATUS_DEAD: "dead",
    pb.TASK_STATUS_CANCELLED: "cancelled",
}
FINISHED = frozenset({"succeeded", "dead", "cancelled"})


def duration(value: Seconds) -> Duration:
    d = Duration()
    d.FromTimedelta(value if isinstance(value, timedelta) else timedelta(seconds=value))
    return d


def timestamp(value: datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(value if value.tzinfo else value.replace(tzinfo=UTC))
    return ts


def to_json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def from_json(data: bytes) -> Any:
    return json.loads(data) if data else None


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One task to enqueue; every field but `type` has a default (the server's, where unset)."""

    type: str
    payload: Any = None
    queue: str = "default"
    priority: int = 0
    delay: Seconds | None = None
    run_at: datetime | None = None
    max_attempts: int | None = None
    timeout: Seconds | None = None
    idempotency_key: str | None = None
    backoff_base: Seconds | None = None
    backoff_cap: Seconds | None = None

    def to_proto(self) -> pb.NewTask:
        msg = pb.NewTask(
            queue=self.queue,
            type=self.type,
            payload=to_json(self.payload),
            priority=self.priority,
            max_attempts=self.max_attempts or 0,
            idempotency_key=self.idempotency_key or "",
        )
        if self.delay is not None and self.run_at is not None:
            raise ValueError("give delay or run_at, not both")
        if self.delay is not None:
            msg.delay.CopyFrom(duration(self.delay))
        if self.run_at is not None:
            msg.run_at.CopyFrom(timestamp(self.run_at))
        for name in ("timeout", "backoff_base", "backoff_cap"):
            value = getattr(self, name)
            if value is not None:
                getattr(msg, name).CopyFrom(duration(value))
        return msg


@dataclass(frozen=True, slots=True)
class AttemptInfo:
    number: int
    worker_id: str
    started_at: datetime
    ended_at: datetime | None
    outcome: str
    error: str


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """A task as GetTask reports it."""

    id: str
    queue: str
    type: str
    status: str  # queued, scheduled, leased, succeeded, dead or cancelled
    payload: Any
    result: Any
    attempts: int
    max_attempts: int
    last_error: str
    cancel_requested: bool
    created_at: datetime
    finished_at: datetime | None
    history: tuple[AttemptInfo, ...] = field(default=())

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


def _time(msg: Any, name: str) -> datetime | None:
    return getattr(msg, name).ToDatetime(UTC) if msg.HasField(name) else None


def task_info(t: pb.Task) -> TaskInfo:
    return TaskInfo(
        id=t.id,
        queue=t.queue,
        type=t.type,
        status=_STATUS_NAMES.get(t.status, "unknown"),
        payload=from_json(t.payload),
        result=from_json(t.result),
        attempts=t.attempts,
        max_attempts=t.max_attempts,
        last_error=t.last_error,
        cancel_requested=t.cancel_requested,
        created_at=t.created_at.ToDatetime(UTC),
        finished_at=_time(t, "finished_at"),
        history=tuple(
            AttemptInfo(
                a.number, a.worker_id, a.started_at.ToDatetime(UTC), _time(a, "ended_at"), a.outcome, a.error
            )
            for a in t.history
        ),
    )
