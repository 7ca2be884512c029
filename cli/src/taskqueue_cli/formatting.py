"""Human output (aligned tables, readable times) and JSON output for scripts."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TextIO

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from taskqueue_proto.v1 import admin_pb2 as admin_pb
from taskqueue_proto.v1 import taskqueue_pb2 as pb

STATUS_NAMES: dict[pb.TaskStatus.ValueType, str] = {
    pb.TASK_STATUS_QUEUED: "queued",
    pb.TASK_STATUS_SCHEDULED: "scheduled",
    pb.TASK_STATUS_LEASED: "leased",
    pb.TASK_STATUS_SUCCEEDED: "succeeded",
    pb.TASK_STATUS_DEAD: "dead",
    pb.TASK_STATUS_CANCELLED: "cancelled",
}
STATUS_BY_NAME = {name: value for value, name in STATUS_NAMES.items()}


def human_duration(seconds: float) -> str:
    seconds = abs(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            whole = int(seconds // size)
            rest = int((seconds % size) // (size // (24 if unit == "d" else 60)))
            sub = {"d": "h", "h": "m", "m": "s"}[unit]
            return f"{whole}{unit}{rest}{sub}" if rest else f"{whole}{unit}"
    return f"{seconds:.0f}s" if seconds >= 1 else f"{seconds * 1000:.0f}ms"


def _has(msg: Any, field: str) -> bool:
    return bool(msg.HasField(field))


def when(ts: Timestamp, now: datetime | None = None) -> str:
    """'2026-11-30 14:03:21 (5m ago)', or '' for an unset time."""
    moment = ts.ToDatetime(UTC)
    delta = ((now or datetime.now(UTC)) - moment).total_seconds()
    relative = f"{human_duration(delta)} ago" if delta >= 0 else f"in {human_duration(delta)}"
    return f"{moment:%Y-%m-%d %H:%M:%S} ({relative})"


def optional_when(msg: Any, field: str) -> str:
    return when(getattr(msg, field)) if _has(msg, field) else ""


def one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], out: TextIO = sys.stdout) -> None:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]
    for line in [headers, *rows]:
        out.write("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() + "\n")


def _json_value(data: bytes) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return data.decode("utf-8", "replace")


def _iso(msg: Any, field: str) -> str | None:
    return getattr(msg, field).ToDatetime(UTC).isoformat() if _has(msg, field) else None


def _seconds(d: Duration) -> float:
    return d.seconds + d.nanos / 1e9


def task_json(t: pb.Task) -> dict[str, Any]:
    return {
        "id": t.id,
        "queue": t.queue,
        "type": t.type,
        "status": STATUS_NAMES.get(t.status, "unknown"),
        "priority": t.priority,
        "attempts": t.attempts,
        "max_attempts": t.max_attempts,
        "payload": _json_value(t.payload),
        "result": _json_value(t.result),
        "last_error": t.last_error or None,
        "idempotency_key": t.idempotency_key or None,
        "cancel_requested": t.cancel_requested,
        "lease_owner": t.lease_owner or None,
        "timeout_seconds": _seconds(t.timeout),
        "run_at": _iso(t, "run_at"),
        "created_at": _iso(t, "created_at"),
        "updated_at": _iso(t, "updated_at"),
        "started_at": _iso(t, "started_at"),
        "finished_at": _iso(t, "finished_at"),
        "lease_expires_at": _iso(t, "lease_expires_at"),
        "history": [
            {
                "attempt": a.number,
                "worker_id": a.worker_id,
                "started_at": _iso(a, "started_at"),
                "ended_at": _iso(a, "ended_at"),
                "outcome": a.outcome,
                "error": a.error or None,
            }
            for a in t.history
        ],
    }


def queue_json(q: admin_pb.QueueStats) -> dict[str, Any]:
    return {
        "queue": q.queue,
        "queued": q.queued,
        "scheduled": q.scheduled,
        "leased": q.leased,
        "succeeded": q.succeeded,
        "dead": q.dead,
        "cancelled": q.cancelled,
        "oldest_ready_age_seconds": _seconds(q.oldest_ready_age) if _has(q, "oldest_ready_age") else None,
    }


def print_json(value: Any, out: TextIO = sys.stdout) -> None:
    out.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def task_detail(t: pb.Task, out: TextIO = sys.stdout) -> None:
    status = STATUS_NAMES.get(t.status, "unknown")
    if t.cancel_requested and status == "leased":
        status += " (cancel requested)"
    fields = [
        ("Task", t.id),
        ("Queue", t.queue),
        ("Type", t.type),
        ("Status", status),
        ("Attempts", f"{t.attempts} of {t.max_attempts}"),
        ("Priority", str(t.priority)),
        ("Created", optional_when(t, "created_at")),
        ("Run at", optional_when(t, "run_at")),
        ("Started", optional_when(t, "started_at")),
        ("Finished", optional_when(t, "finished_at")),
        (
            "Lease",
            f"{t.lease_owner} until {optional_when(t, 'lease_expires_at')}"
            if _has(t, "lease_expires_at")
            else "",
        ),
        ("Key", t.idempotency_key),
        ("Last error", t.last_error),
        ("Payload", json.dumps(_json_value(t.payload), ensure_ascii=False)),
        ("Result", json.dumps(_json_value(t.result), ensure_ascii=False) if t.result else ""),
    ]
    width = max(len(name) for name, _ in fields)
    for name, value in fields:
        if value:
            out.write(f"{name.ljust(width)}  {value}\n")
    if t.history:
        out.write("\nAttempts\n")
        table(
            ["#", "WORKER", "STARTED", "ENDED", "OUTCOME", "ERROR"],
            [
                [str(a.number), a.worker_id, optional_when(a, "started_at"), optional_when(a, "ended_at"),
                 a.outcome, one_line(a.error, 80)]
                for a in t.history
            ],
            out,
        )  # fmt: skip
