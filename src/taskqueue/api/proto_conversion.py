"""Domain objects -> protobuf messages (the reverse direction lives in request_validation)."""

from __future__ import annotations

from datetime import datetime, timedelta

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from taskqueue.api.status_codes import item_status
from taskqueue.domain import (
    Attempt,
    EnqueueOutcome,
    FinishOutcome,
    HeartbeatOutcome,
    LeasedTask,
    QueueStats,
    TaskStatus,
    TaskView,
)
from taskqueue_proto.v1 import admin_pb2 as admin_pb
from taskqueue_proto.v1 import taskqueue_pb2 as pb

STATUS_TO_PROTO: dict[TaskStatus, pb.TaskStatus.ValueType] = {
    TaskStatus.QUEUED: pb.TASK_STATUS_QUEUED,
    TaskStatus.SCHEDULED: pb.TASK_STATUS_SCHEDULED,
    TaskStatus.LEASED: pb.TASK_STATUS_LEASED,
    TaskStatus.SUCCEEDED: pb.TASK_STATUS_SUCCEEDED,
    TaskStatus.DEAD: pb.TASK_STATUS_DEAD,
    TaskStatus.CANCELLED: pb.TASK_STATUS_CANCELLED,
}
STATUS_FROM_PROTO: dict[int, TaskStatus] = {v: k for k, v in STATUS_TO_PROTO.items()}


def ts(value: datetime) -> Timestamp:
    micros = int(value.timestamp() * 1_000_000)
    return Timestamp(seconds=micros // 1_000_000, nanos=(micros % 1_000_000) * 1000)


def dur(value: timedelta) -> Duration:
    micros = value // timedelta(microseconds=1)
    seconds, rest = divmod(micros, 1_000_000)
    return Duration(seconds=seconds, nanos=rest * 1000)


def lease_response(tasks: list[LeasedTask]) -> pb.LeaseResponse:
    # Tasks leased together share their expiry and mostly their timeout: convert each value once.
    times: dict[datetime, Timestamp] = {}
    durations: dict[timedelta, Duration] = {}
    return pb.LeaseResponse(
        tasks=[
            pb.LeasedTask(
                task_id=t.task_id,
                lease_id=t.lease_id,
                queue=t.queue,
                type=t.type,
                payload=t.payload_json.encode(),
                attempt=t.attempt,
                max_attempts=t.max_attempts,
                lease_expires_at=times.get(t.lease_expires_at)
                or times.setdefault(t.lease_expires_at, ts(t.lease_expires_at)),
                timeout=durations.get(t.timeout) or durations.setdefault(t.timeout, dur(t.timeout)),
                priority=t.priority,
            )
            for t in tasks
        ]
    )


def enqueue_result(o: EnqueueOutcome) -> pb.EnqueueResult:
    return pb.EnqueueResult(status=item_status(o.error), task_id=o.task_id or "", created=o.created)


def heartbeat_result(o: HeartbeatOutcome) -> pb.HeartbeatResult:
    result = pb.HeartbeatResult(
        task_id=o.task_id, status=item_status(o.error), cancel_requested=o.cancel_requested
    )
    if o.lease_expires_at is not None:
        result.lease_expires_at.CopyFrom(ts(o.lease_expires_at))
    return result


def item_result(o: FinishOutcome) -> pb.ItemResult:
    return pb.ItemResult(task_id=o.task_id, status=item_status(o.error))


def fail_result(o: FinishOutcome) -> pb.FailResult:
    result = pb.FailResult(task_id=o.task_id, status=item_status(o.error))
    if o.new_status is not None:
        result.new_status = STATUS_TO_PROTO[o.new_status]
    if o.next_run_at is not None and o.new_status is TaskStatus.SCHEDULED:
        result.next_run_at.CopyFrom(ts(o.next_run_at))
    return result


def attempt(a: Attempt) -> pb.Attempt:
    msg = pb.Attempt(
        number=a.number,
        worker_id=a.worker_id,
        started_at=ts(a.started_at),
        outcome=a.outcome,
        error=a.error or "",
    )
    if a.ended_at is not None:
        msg.ended_at.CopyFrom(ts(a.ended_at))
    return msg


def task(t: TaskView) -> pb.Task:
    msg = pb.Task(
        id=t.id,
        queue=t.queue,
        type=t.type,
        payload=t.payload_json.encode(),
        priority=t.priority,
        status=STATUS_TO_PROTO[t.status],
        attempts=t.attempts,
        max_attempts=t.max_attempts,
        run_at=ts(t.run_at),
        timeout=dur(t.timeout),
        idempotency_key=t.idempotency_key or "",
        last_error=t.last_error or "",
        result=t.result_json.encode() if t.result_json is not None else b"",
        cancel_requested=t.cancel_requested,
        lease_owner=t.lease_owner or "",
        created_at=ts(t.created_at),
        updated_at=ts(t.updated_at),
        history=[attempt(a) for a in t.history],
    )
    for field, value in (
        ("lease_expires_at", t.lease_expires_at),
        ("started_at", t.started_at),
        ("finished_at", t.finished_at),
    ):
        if value is not None:
            getattr(msg, field).CopyFrom(ts(value))
    return msg


def queue_stats(s: QueueStats) -> admin_pb.QueueStats:
    msg = admin_pb.QueueStats(
        queue=s.queue,
        queued=s.queued,
        scheduled=s.scheduled,
        leased=s.leased,
        succeeded=s.succeeded,
        dead=s.dead,
        cancelled=s.cancelled,
    )
    if s.oldest_ready_age is not None:
        msg.oldest_ready_age.CopyFrom(dur(s.oldest_ready_age))
    return msg
