"""Check every request and turn it into domain objects, filling in server defaults.

Each error names the field and the bound, e.g. "tasks[3].payload is 2.1 MiB; the limit is 1 MiB".
A batch is checked as a whole: one bad item rejects the call and nothing is applied.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from uuid import UUID

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from taskqueue.api.proto_conversion import STATUS_FROM_PROTO
from taskqueue.config import Limits, TaskDefaults
from taskqueue.domain import (
    Completion,
    Failure,
    LeaseOrder,
    LeaseRef,
    NewTask,
    PageCursor,
    TaskFilter,
    TaskId,
    TaskStatus,
)
from taskqueue.errors import InvalidArgument
from taskqueue_proto.v1 import admin_pb2 as admin_pb
from taskqueue_proto.v1 import taskqueue_pb2 as pb

_MAX_QUEUES_PER_LEASE = 100
_MAX_PAGE_SIZE = 1000
_DEFAULT_PAGE_SIZE = 50
_MAX_DURATION_SECONDS = 10 * 365 * 24 * 3600  # far beyond any bound, far below timedelta's limit


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MiB".replace(".0 MiB", " MiB")
    if n >= 1024:
        return f"{n / 1024:.1f} KiB".replace(".0 KiB", " KiB")
    return f"{n} bytes"


def _seconds(d: timedelta) -> str:
    text = format(d.total_seconds(), ".3f").rstrip("0").rstrip(".") + "s"
    if d >= timedelta(days=1) and d % timedelta(days=1) == timedelta(0):
        text += f" ({d.days} day{'s' if d.days != 1 else ''})"
    return text


_WHITESPACE = re.compile(r"\s")


def name(value: str, field: str, limits: Limits) -> str:
    """Queue, type and worker names: 1..max_name_length printable characters, no whitespace."""
    if not value:
        raise InvalidArgument(f"{field} is empty; it must be 1 to {limits.max_name_length} characters")
    if len(value) > limits.max_name_length:
        raise InvalidArgument(f"{field} is {len(value)} characters; the limit is {limits.max_name_length}")
    if not value.isprintable() or _WHITESPACE.search(value):
        raise InvalidArgument(f"{field} {value!r} contains whitespace or control characters")
    return value


_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def task_id(value: str, field: str) -> TaskId:
    """Any UUID spelling -> the canonical text form (lowercase, hyphenated), as PostgreSQL prints it."""
    if _CANONICAL_UUID.fullmatch(value):
        return value
    try:
        return str(UUID(value))
    except ValueError:
        shown = value if len(value) <= 64 else value[:64] + "..."
        raise InvalidArgument(f"{field} {shown!r} is not a valid UUID") from None


def json_text(data: bytes, field: str, max_bytes: int, *, empty_means_null: bool = True) -> str:
    """Bytes holding UTF-8 JSON -> the JSON text, accepted by PostgreSQL's jsonb as it is."""
    if len(data) > max_bytes:
        raise InvalidArgument(f"{field} is {_size(len(data))}; the limit is {_size(max_bytes)}")
    if not data and empty_means_null:
        return "null"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidArgument(f"{field} is not valid UTF-8 (byte {e.start})") from None
    try:
        value = _JSON.decode(text)
    except (ValueError, RecursionError) as e:
        raise InvalidArgument(f"{field} is not valid JSON: {str(e)[:200]}") from None
    # jsonb refuses \u0000 and lone surrogates that Python's json accepts; check only when escapes occur.
    if "\\u" in text:
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidArgument(f"{field} contains an unpaired surrogate escape") from None
        if "\\u0000" in text:
            raise InvalidArgument(f"{field} contains \\u0000, which PostgreSQL cannot store")
    return text


def _reject_constant(constant: str) -> object:
    raise ValueError(f"{constant} is not JSON")


# One decoder for all calls: json.loads with options builds a new decoder every time.
_JSON = json.JSONDecoder(parse_constant=_reject_constant)


def duration(
    d: Duration, field: str, *, low: timedelta, high: timedelta, allow_zero: bool = False
) -> timedelta:
    if abs(d.seconds) > _MAX_DURATION_SECONDS or abs(d.nanos) >= 1_000_000_000:
        raise InvalidArgument(f"{field} is out of range; the limit is {_seconds(high)}")
    value = timedelta(seconds=d.seconds, microseconds=d.nanos // 1000)
    if value == timedelta(0) and allow_zero:
        return value
    if value < low or value > high:
        raise InvalidArgument(
            f"{field} is {_seconds(value)}; it must be between {_seconds(low)} and {_seconds(high)}"
        )
    return value


def timestamp(ts: Timestamp, field: str) -> datetime:
    # 0001-01-01 .. 9999-12-31 is what datetime (and the proto spec) can hold.
    if not -62135596800 <= ts.seconds <= 253402300799 or not 0 <= ts.nanos < 1_000_000_000:
        raise InvalidArgument(f"{field} is out of range (years 1 to 9999)")
    return datetime.fromtimestamp(ts.seconds, UTC) + timedelta(microseconds=ts.nanos // 1000)


def _batch(items: Sequence[object], field: str, limits: Limits) -> None:
    if not items:
        raise InvalidArgument(f"{field} is empty; send 1 to {limits.max_batch} items")
    if len(items) > limits.max_batch:
        raise InvalidArgument(f"{field} has {len(items)} items; the limit is {limits.max_batch}")


def _no_duplicates(ids: Sequence[TaskId], field: str) -> None:
    if len(set(ids)) != len(ids):
        raise InvalidArgument(f"{field} names the same task_id twice")


def _schedule(t: pb.NewTask, field: str, limits: Limits) -> tuple[datetime | None, timedelta]:
    """(run_at, delay) from the task's oneof; both unset means "now"."""
    which = t.WhichOneof("schedule")
    if which == "delay":
        return None, duration(t.delay, f"{field}.delay", low=timedelta(0), high=limits.max_delay)
    if which == "run_at":
        run_at = timestamp(t.run_at, f"{field}.run_at")
        if run_at - datetime.now(UTC) > limits.max_delay:
            raise InvalidArgument(
                f"{field}.run_at is {run_at.isoformat()}; it may be at most "
                f"{limits.max_delay.days} days ahead"
            )
        return run_at, timedelta(0)
    return None, timedelta(0)


def _backoff(
    t: pb.NewTask, field: str, limits: Limits, defaults: TaskDefaults
) -> tuple[timedelta, timedelta]:
    low, high = timedelta(milliseconds=1), limits.max_delay
    base, cap = defaults.backoff_base, defaults.backoff_cap
    if t.HasField("backoff_base"):
        base = duration(t.backoff_base, f"{field}.backoff_base", low=low, high=high)
    if t.HasField("backoff_cap"):
        cap = duration(t.backoff_cap, f"{field}.backoff_cap", low=low, high=high)
    if base > cap:
        raise InvalidArgument(
            f"{field}.backoff_base ({_seconds(base)}) is larger than backoff_cap ({_seconds(cap)})"
        )
    return base, cap


def _idempotency_key(key: str, field: str, limits: Limits) -> str | None:
    if not key:
        return None
    if len(key) > limits.max_key_length:
        raise InvalidArgument(f"{field} is {len(key)} characters; the limit is {limits.max_key_length}")
    if not key.isprintable():
        raise InvalidArgument(f"{field} contains control characters")
    return key


def new_task(t: pb.NewTask, field: str, limits: Limits, defaults: TaskDefaults) -> NewTask:
    if not limits.min_priority <= t.priority <= limits.max_priority:
        raise InvalidArgument(
            f"{field}.priority is {t.priority}; it must be between "
            f"{limits.min_priority} and {limits.max_priority}"
        )
    max_attempts = t.max_attempts or defaults.max_attempts
    if not 1 <= max_attempts <= limits.max_attempts:
        raise InvalidArgument(
            f"{field}.max_attempts is {t.max_attempts}; it must be between 1 and {limits.max_attempts}"
        )
    timeout = defaults.timeout
    if t.HasField("timeout"):
        timeout = duration(t.timeout, f"{field}.timeout", low=timedelta(seconds=1), high=limits.max_timeout)
    run_at, delay = _schedule(t, field, limits)
    backoff_base, backoff_cap = _backoff(t, field, limits, defaults)
    return NewTask(
        queue=name(t.queue, f"{field}.queue", limits),
        type=name(t.type, f"{field}.type", limits),
        payload_json=json_text(t.payload, f"{field}.payload", limits.max_payload_bytes),
        priority=t.priority,
        run_at=run_at,
        delay=delay,
        max_attempts=max_attempts,
        timeout=timeout,
        idempotency_key=_idempotency_key(t.idempotency_key, f"{field}.idempotency_key", limits),
        backoff_base=backoff_base,
        backoff_cap=backoff_cap,
    )


def enqueue(req: pb.EnqueueRequest, limits: Limits, defaults: TaskDefaults) -> list[NewTask]:
    _batch(req.tasks, "tasks", limits)
    return [new_task(t, f"tasks[{i}]", limits, defaults) for i, t in enumerate(req.tasks)]


def _lease_duration(
    d: Duration, present: bool, field: str, limits: Limits, defaults: TaskDefaults
) -> timedelta:
    if not present:
        return defaults.lease_duration
    return duration(d, field, low=limits.min_lease, high=limits.max_lease)


def lease(req: pb.LeaseRequest, limits: Limits, defaults: TaskDefaults) -> LeaseOrder:
    worker = name(req.worker_id, "worker_id", limits)
    if not req.queues:
        raise InvalidArgument("queues is empty; name at least one queue to lease from")
    if len(req.queues) > _MAX_QUEUES_PER_LEASE:
        raise InvalidArgument(f"queues has {len(req.queues)} names; the limit is {_MAX_QUEUES_PER_LEASE}")
    queues = tuple(dict.fromkeys(name(q, f"queues[{i}]", limits) for i, q in enumerate(req.queues)))
    types = tuple(dict.fromkeys(name(t, f"task_types[{i}]", limits) for i, t in enumerate(req.task_types)))
    max_tasks = req.max_tasks or 1
    if not 1 <= max_tasks <= limits.max_batch:
        raise InvalidArgument(f"max_tasks is {req.max_tasks}; it must be between 1 and {limits.max_batch}")
    wait = timedelta(0)
    if req.HasField("wait"):
        wait = duration(req.wait, "wait", low=timedelta(0), high=limits.max_wait)
    return LeaseOrder(
        worker_id=worker,
        queues=queues,
        task_types=types,
        lease_duration=_lease_duration(
            req.lease_duration, req.HasField("lease_duration"), "lease_duration", limits, defaults
        ),
        max_tasks=max_tasks,
        wait=wait,
    )


def _lease_refs(leases: Sequence[pb.LeaseRef], limits: Limits) -> list[LeaseRef]:
    _batch(leases, "leases", limits)
    refs = [
        LeaseRef(task_id(r.task_id, f"leases[{i}].task_id"), task_id(r.lease_id, f"leases[{i}].lease_id"))
        for i, r in enumerate(leases)
    ]
    _no_duplicates([r.task_id for r in refs], "leases")
    return refs


def release(req: pb.ReleaseRequest, limits: Limits) -> list[LeaseRef]:
    return _lease_refs(req.leases, limits)


def heartbeat(
    req: pb.HeartbeatRequest, limits: Limits, defaults: TaskDefaults
) -> tuple[list[LeaseRef], timedelta]:
    refs = _lease_refs(req.leases, limits)
    lease_duration = _lease_duration(
        req.lease_duration, req.HasField("lease_duration"), "lease_duration", limits, defaults
    )
    return refs, lease_duration


def complete(req: pb.CompleteRequest, limits: Limits) -> list[Completion]:
    _batch(req.completions, "completions", limits)
    completions = []
    for i, c in enumerate(req.completions):
        field = f"completions[{i}]"
        result = None
        if c.result:
            result = json_text(c.result, f"{field}.result", limits.max_payload_bytes)
        completions.append(
            Completion(
                task_id(c.task_id, f"{field}.task_id"), task_id(c.lease_id, f"{field}.lease_id"), result
            )
        )
    _no_duplicates([c.task_id for c in completions], "completions")
    return completions


def _error_text(error: str, limits: Limits) -> str:
    # A failing worker should never be refused for its error message: clean it and cut it short.
    text = error.replace("\x00", "\\0") or "(no error message)"
    if len(text) > limits.max_error_length:
        text = text[: limits.max_error_length] + f"... [truncated from {len(error)} characters]"
    return text


def fail(req: pb.FailRequest, limits: Limits) -> list[Failure]:
    _batch(req.failures, "failures", limits)
    failures = []
    for i, f in enumerate(req.failures):
        field = f"failures[{i}]"
        retry_after = None
        if f.HasField("retry_after"):
            retry_after = duration(
                f.retry_after, f"{field}.retry_after", low=timedelta(0), high=limits.max_delay
            )
        failures.append(
            Failure(
                task_id=task_id(f.task_id, f"{field}.task_id"),
                lease_id=task_id(f.lease_id, f"{field}.lease_id"),
                error=_error_text(f.error, limits),
                permanent=f.permanent,
                retry_after=retry_after,
            )
        )
    _no_duplicates([f.task_id for f in failures], "failures")
    return failures


def task_status(value: int, field: str) -> TaskStatus | None:
    if value == pb.TASK_STATUS_UNSPECIFIED:
        return None
    status = STATUS_FROM_PROTO.get(value)
    if status is None:
        raise InvalidArgument(f"{field} {value} is not a known TaskStatus")
    return status


def task_filter(f: admin_pb.TaskFilter, limits: Limits) -> TaskFilter:
    error_contains = f.error_contains or None
    if error_contains is not None and len(error_contains) > limits.max_error_length:
        raise InvalidArgument(
            f"filter.error_contains is {len(error_contains)} characters; "
            f"the limit is {limits.max_error_length}"
        )
    if error_contains is not None and "\x00" in error_contains:
        raise InvalidArgument("filter.error_contains contains a NUL character")
    return TaskFilter(
        queue=name(f.queue, "filter.queue", limits) if f.queue else None,
        type=name(f.type, "filter.type", limits) if f.type else None,
        status=task_status(f.status, "filter.status"),
        error_contains=error_contains,
        created_after=timestamp(f.created_after, "filter.created_after")
        if f.HasField("created_after")
        else None,
        created_before=timestamp(f.created_before, "filter.created_before")
        if f.HasField("created_before")
        else None,
    )


def page_size(value: int) -> int:
    if value == 0:
        return _DEFAULT_PAGE_SIZE
    if not 1 <= value <= _MAX_PAGE_SIZE:
        raise InvalidArgument(f"page_size is {value}; it must be between 1 and {_MAX_PAGE_SIZE}")
    return value


def encode_page_token(cursor: PageCursor | None) -> str:
    if cursor is None:
        return ""
    raw = f"{cursor.created_at.isoformat()}|{cursor.task_id}".encode()
    return base64.urlsafe_b64encode(raw).decode()


def page_token(token: str) -> PageCursor | None:
    if not token:
        return None
    try:
        created_at, _, tid = base64.urlsafe_b64decode(token.encode()).decode().partition("|")
        return PageCursor(datetime.fromisoformat(created_at), str(UUID(tid)))
    except (ValueError, binascii.Error, UnicodeError):
        raise InvalidArgument(
            "page_token is malformed; pass the next_page_token of a previous response"
        ) from None


def requeue_ids(ids: Sequence[str], limits: Limits) -> list[TaskId]:
    if len(ids) > limits.max_batch:
        raise InvalidArgument(f"task_ids has {len(ids)} ids; the limit is {limits.max_batch}")
    return [task_id(v, f"task_ids[{i}]") for i, v in enumerate(ids)]
