"""Exit codes of taskq, documented in `taskq --help` and the README."""

from __future__ import annotations

import grpc

OK = 0
ERROR = 1  # anything else the server refused or failed at
USAGE = 2  # a bad flag or argument, or a request the server called invalid
NOT_FOUND = 3  # no task with that id
UNREACHABLE = 4  # the server could not be reached (or did not answer in time)
CONFLICT = 5  # the task's state does not allow it (e.g. cancelling a finished task)
ABORTED = 6  # the operator answered "no" at a confirmation prompt

HELP = (
    "exit codes: 0 ok, 1 other error, 2 invalid usage, 3 not found, 4 server unreachable, "
    "5 conflict (e.g. task already finished), 6 aborted at the confirmation prompt"
)

_BY_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: USAGE,
    grpc.StatusCode.NOT_FOUND: NOT_FOUND,
    grpc.StatusCode.UNAVAILABLE: UNREACHABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED: UNREACHABLE,
    grpc.StatusCode.FAILED_PRECONDITION: CONFLICT,
    grpc.StatusCode.ALREADY_EXISTS: CONFLICT,
}


_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}


def for_status(code: grpc.StatusCode | int) -> int:
    """The exit code for a call's status, or for one item's status number in a batch answer."""
    if isinstance(code, int):
        code = _BY_NUMBER.get(code, grpc.StatusCode.UNKNOWN)
    return _BY_STATUS.get(code, ERROR)
