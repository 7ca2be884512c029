"""The one exception tree of the server. The API layer maps each class to a gRPC status code."""

from __future__ import annotations


class TaskQueueError(Exception):
    """Root of every error the server raises on purpose; the message is meant for the caller."""


class InvalidArgument(TaskQueueError):
    """The request is malformed; the message names the field and the bound."""


class NotFound(TaskQueueError):
    """The task (or other object) does not exist."""


class AlreadyExists(TaskQueueError):
    """An idempotency key is already used by a task with another payload or type."""


class Conflict(TaskQueueError):
    """The task is not in a state that allows the operation (e.g. cancelling a finished task)."""


class LeaseLost(Conflict):
    """The caller's lease expired or was taken over: its report is rejected, never applied."""


class Unavailable(TaskQueueError):
    """The database cannot be reached or the server is shutting down; the call may be retried."""
