"""Filter flags (--queue, --type, --error, --since, --before) -> admin TaskFilter."""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime, timedelta

from google.protobuf.timestamp_pb2 import Timestamp

from taskqueue_proto.v1 import admin_pb2 as admin_pb
from taskqueue_proto.v1 import taskqueue_pb2 as pb

_AGE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def point_in_time(text: str) -> datetime:
    """'2h', '30m', '7d' ago, or an ISO time such as 2026-11-30T12:00:00Z."""
    age = _AGE.match(text.strip())
    if age:
        return datetime.now(UTC) - timedelta(seconds=float(age.group(1)) * _UNITS[age.group(2)])
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither an age (30m, 2h, 7d) nor an ISO time (2026-11-30T12:00:00Z)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def add_filter_flags(parser: argparse.ArgumentParser, *, error: bool = True) -> None:
    parser.add_argument("--queue", help="only this queue")
    parser.add_argument("--type", help="only this task type")
    if error:
        parser.add_argument("--error", help="only tasks whose last error contains this text (any case)")
    parser.add_argument(
        "--since", type=point_in_time, help="created at or after: an age (2h, 7d) or ISO time"
    )
    parser.add_argument("--before", type=point_in_time, help="created before: an age (2h, 7d) or ISO time")


def task_filter(
    args: argparse.Namespace, status: pb.TaskStatus.ValueType = pb.TASK_STATUS_UNSPECIFIED
) -> admin_pb.TaskFilter:
    flt = admin_pb.TaskFilter(
        queue=args.queue or "",
        type=args.type or "",
        status=status,
        error_contains=getattr(args, "error", None) or "",
    )
    for field, value in (("created_after", args.since), ("created_before", args.before)):
        if value is not None:
            ts = Timestamp()
            ts.FromDatetime(value)
            getattr(flt, field).CopyFrom(ts)
    return flt
