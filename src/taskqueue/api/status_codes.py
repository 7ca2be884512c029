"""The one mapping from taskqueue errors to gRPC status codes (for calls and for batch items)."""

from __future__ import annotations

import grpc

from taskqueue.errors import (
    AlreadyExists,
    Conflict,
    InvalidArgument,
    NotFound,
    TaskQueueError,
    Unavailable,
)
from taskqueue_proto.v1 import taskqueue_pb2 as pb

_CODES: tuple[tuple[type[TaskQueueError], grpc.StatusCode], ...] = (
    (InvalidArgument, grpc.StatusCode.INVALID_ARGUMENT),
    (NotFound, grpc.StatusCode.NOT_FOUND),
    (AlreadyExists, grpc.StatusCode.ALREADY_EXISTS),
    (Conflict, grpc.StatusCode.FAILED_PRECONDITION),  # LeaseLost included
    (Unavailable, grpc.StatusCode.UNAVAILABLE),
)


def status_code_for(error: TaskQueueError) -> grpc.StatusCode:
    for cls, code in _CODES:
        if isinstance(error, cls):
            return code
    return grpc.StatusCode.INTERNAL


def item_status(error: TaskQueueError | None) -> pb.ItemStatus | None:
    """The status of one batch item; None for OK, since an unset status reads as code 0 (OK)
    and leaving it out saves a message per task on the hot path."""
    if error is None:
        return None
    code: int = status_code_for(error).value[0]
    return pb.ItemStatus(code=code, message=str(error))
