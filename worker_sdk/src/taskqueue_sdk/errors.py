"""Typed exceptions, one per thing a caller may want to handle, mapped from gRPC status codes."""

from __future__ import annotations

import grpc


class TaskQueueError(Exception):
    """Root of every error the SDK raises."""

    code: grpc.StatusCode | None = None


class InvalidRequest(TaskQueueError):
    """The server refused the request as malformed; the message names the field and the bound."""


class TaskNotFound(TaskQueueError):
    """No task has this id."""


class DuplicateTask(TaskQueueError):
    """The idempotency key is already used in this queue by a task with another payload or type."""


class FailedPrecondition(TaskQueueError):
    """The task is not in a state that allows this (e.g. cancelling a finished task)."""


class LeaseLost(FailedPrecondition):
    """The lease expired or was taken over: this worker's report was rejected, not applied."""


class Unavailable(TaskQueueError):
    """The server or its database could not be reached (after retries)."""


class DeadlineExceeded(TaskQueueError):
    """The call did not finish within its timeout."""


class TaskFailed(TaskQueueError):
    """`wait()` on a task that ended dead: the message is its last error."""

    def __init__(self, task_id: str, error: str) -> None:
        super().__init__(f"task {task_id} is dead: {error}")
        self.task_id = task_id
        self.error = error


class TaskCancelled(TaskQueueError):
    """`wait()` on a task that was cancelled."""


class Permanent(Exception):
    """Raise (or wrap) in a handler to fail the task without retrying it: it goes dead at once.

    raise Permanent("invoice 42 does not exist")
    raise Permanent(KeyError("42"))
    """


_BY_CODE: dict[grpc.StatusCode, type[TaskQueueError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidRequest,
    grpc.StatusCode.NOT_FOUND: TaskNotFound,
    grpc.StatusCode.ALREADY_EXISTS: DuplicateTask,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceeded,
}
_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}


def error_for(code: grpc.StatusCode | int, message: str) -> TaskQueueError:
    """The exception for a call's status, or for one item of a batch answer."""
    if isinstance(code, int):
        code = _BY_NUMBER.get(code, grpc.StatusCode.UNKNOWN)
    error = _BY_CODE.get(code, TaskQueueError)(message)
    error.code = code
    return error


def from_rpc_error(e: grpc.RpcError) -> TaskQueueError:
    code = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
    details = e.details() if hasattr(e, "details") else str(e)
    return error_for(code, details or code.name)
