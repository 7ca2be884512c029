"""Plain data the layers pass to each other: tasks, leases, reports and their outcomes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from taskqueue.errors import TaskQueueError

# Task and lease ids travel as canonical TaskId text (lowercase, hyphenated): that is what the wire
# carries and what PostgreSQL prints, so the hot path never builds a uuid.TaskId object per task.
TaskId = str


class TaskStatus(StrEnum):
    QUEUED = "queued"
    SCHEDULED = "scheduled"  # not stored: a queued task whose run_at is in the future
    LEASED = "leased"
    SUCCEEDED = "succeeded"
    DEAD = "dead"
    CANCELLED = "cancelled"


FINISHED_STATUSES = frozenset({TaskStatus.SUCCEEDED, TaskStatus.DEAD, TaskStatus.CANCELLED})


# Records made once per task on the hot path are plain slotted dataclasses: a frozen dataclass
# pays object.__setattr__ per field, which showed up in the enqueue profile.


@dataclass(slots=True)
class NewTask:
    """A validated task to enqueue, with every server default already filled in."""

    queue: str
    type: str
    payload_json: str
    priority: int
    run_at: datetime | None  # absolute time, or None to use `delay` from now
    delay: timedelta
    max_attempts: int
    timeout: timedelta
    idempotency_key: str | None
    backoff_base: timedelta
    backoff_cap: timedelta


@dataclass(slots=True)
class EnqueueOutcome:
    task_id: TaskId | None
    created: bool
    error: TaskQueueError | None = None


@dataclass(frozen=True, slots=True)
class LeaseOrder:
    """What a worker asks for in one Lease call."""

    worker_id: str
    queues: tuple[str, ...]
    task_types: tuple[str, ...]  # empty: any type
    lease_duration: timedelta
    max_tasks: int
    wait: timedelta


@dataclass(slots=True)
class LeasedTask:
    task_id: TaskId
    lease_id: TaskId
    queue: str
    type: str
    payload_json: str
    attempt: int
    max_attempts: int
    lease_expires_at: datetime
    timeout: timedelta
    priority: int


@dataclass(slots=True)
class LeaseRef:
    task_id: TaskId
    lease_id: TaskId


@dataclass(slots=True)
class Completion:
    task_id: TaskId
    lease_id: TaskId
    result_json: str | None


@dataclass(slots=True)
class Failure:
    task_id: TaskId
    lease_id: TaskId
    error: str
    permanent: bool
    retry_after: timedelta | None


@dataclass(slots=True)
class FailureFacts:
    """What the retry policy needs to know about a task whose attempt just failed."""

    attempts: int
    max_attempts: int
    backoff_base: timedelta
    backoff_cap: timedelta
    cancel_requested: bool


@dataclass(slots=True)
class FailureDecision:
    status: TaskStatus  # QUEUED (retry after delay), DEAD or CANCELLED
    delay: timedelta  # until the retry; zero when finished


@dataclass(slots=True)
class HeartbeatOutcome:
    task_id: TaskId
    lease_expires_at: datetime | None = None
    cancel_requested: bool = False
    error: TaskQueueError | None = None


@dataclass(slots=True)
class FinishOutcome:
    """The outcome of one Complete or Fail item."""

    task_id: TaskId
    error: TaskQueueError | None = None
    new_status: TaskStatus | None = None
    next_run_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Attempt:
    number: int
    worker_id: str
    started_at: datetime
    ended_at: datetime | None
    outcome: str
    error: str | None


@dataclass(frozen=True, slots=True)
class TaskView:
    """A task as operators and producers see it."""

    id: TaskId
    queue: str
    type: str
    payload_json: str
    priority: int
    status: TaskStatus
    attempts: int
    max_attempts: int
    run_at: datetime
    timeout: timedelta
    idempotency_key: str | None
    last_error: str | None
    result_json: str | None
    cancel_requested: bool
    lease_owner: str | None
    lease_expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    history: tuple[Attempt, ...] = ()


@dataclass(frozen=True, slots=True)
class TaskFilter:
    queue: str | None = None
    type: str | None = None
    status: TaskStatus | None = None
    error_contains: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None


@dataclass(frozen=True, slots=True)
class PageCursor:
    """Keyset position: the last task of the previous page (listings go newest first)."""

    created_at: datetime
    task_id: TaskId


@dataclass(frozen=True, slots=True)
class TaskPage:
    tasks: tuple[TaskView, ...]
    next_cursor: PageCursor | None


@dataclass(frozen=True, slots=True)
class QueueStats:
    queue: str
    queued: int
    scheduled: int
    leased: int
    succeeded: int
    dead: int
    cancelled: int
    oldest_ready_age: timedelta | None
