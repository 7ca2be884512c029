"""taskqueue SDK: a producer client and a worker runtime that talk to a taskqueue server over gRPC."""

from taskqueue_sdk.client import AsyncClient, Client, EnqueueResult
from taskqueue_sdk.context import TaskContext
from taskqueue_sdk.errors import (
    DeadlineExceeded,
    DuplicateTask,
    FailedPrecondition,
    InvalidRequest,
    LeaseLost,
    Permanent,
    TaskCancelled,
    TaskFailed,
    TaskNotFound,
    TaskQueueError,
    Unavailable,
)
from taskqueue_sdk.messages import AttemptInfo, TaskInfo, TaskSpec
from taskqueue_sdk.worker import Worker, WorkerOptions

__all__ = [
    "AsyncClient",
    "AttemptInfo",
    "Client",
    "DeadlineExceeded",
    "DuplicateTask",
    "EnqueueResult",
    "FailedPrecondition",
    "InvalidRequest",
    "LeaseLost",
    "Permanent",
    "TaskCancelled",
    "TaskContext",
    "TaskFailed",
    "TaskInfo",
    "TaskNotFound",
    "TaskQueueError",
    "TaskSpec",
    "Unavailable",
    "Worker",
    "WorkerOptions",
]
