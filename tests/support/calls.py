"""Short helpers over the raw generated stubs, so tests read as the scenario they check."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from google.protobuf.duration_pb2 import Duration

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from taskqueue_proto.v1 import taskqueue_pb2_grpc as pb_grpc


def seconds(value: float) -> Duration:
    d = Duration()
    d.FromTimedelta(timedelta(seconds=value))
    return d


def new_task(queue: str = "default", type: str = "job", payload: Any = None, **fields: Any) -> pb.NewTask:
    return pb.NewTask(queue=queue, type=type, payload=json.dumps(payload).encode(), **fields)


def enqueue(stub: pb_grpc.TaskQueueStub, *tasks: pb.NewTask) -> list[str]:
    """Enqueue and insist every item was accepted; returns the task ids."""
    reply = stub.Enqueue(pb.EnqueueRequest(tasks=list(tasks)), timeout=10)
    assert all(r.status.code == 0 for r in reply.results), reply
    return [r.task_id for r in reply.results]


def lease(
    stub: pb_grpc.TaskQueueStub,
    queue: str = "default",
    *,
    worker: str = "worker-1",
    max_tasks: int = 1,
    wait: float | None = None,
    lease_seconds: float = 30,
    types: tuple[str, ...] = (),
) -> list[pb.LeasedTask]:
    request = pb.LeaseRequest(
        worker_id=worker,
        queues=[queue],
        task_types=list(types),
        max_tasks=max_tasks,
        lease_duration=seconds(lease_seconds),
    )
    if wait is not None:
        request.wait.CopyFrom(seconds(wait))
    return list(stub.Lease(request, timeout=(wait or 0) + 10).tasks)


def complete(stub: pb_grpc.TaskQueueStub, t: pb.LeasedTask, result: Any = None) -> pb.ItemResult:
    body = json.dumps(result).encode() if result is not None else b""
    reply = stub.Complete(
        pb.CompleteRequest(
            worker_id="worker",
            completions=[pb.Completion(task_id=t.task_id, lease_id=t.lease_id, result=body)],
        ),
        timeout=10,
    )
    return reply.results[0]


def fail(
    stub: pb_grpc.TaskQueueStub, t: pb.LeasedTask, error: str = "boom", permanent: bool = False
) -> pb.FailResult:
    reply = stub.Fail(
        pb.FailRequest(
            worker_id="worker",
            failures=[pb.Failure(task_id=t.task_id, lease_id=t.lease_id, error=error, permanent=permanent)],
        ),
        timeout=10,
    )
    return reply.results[0]


def heartbeat(stub: pb_grpc.TaskQueueStub, t: pb.LeasedTask, lease_seconds: float = 30) -> pb.HeartbeatResult:
    reply = stub.Heartbeat(
        pb.HeartbeatRequest(
            worker_id="worker",
            leases=[pb.LeaseRef(task_id=t.task_id, lease_id=t.lease_id)],
            lease_duration=seconds(lease_seconds),
        ),
        timeout=10,
    )
    return reply.results[0]


def get(stub: pb_grpc.TaskQueueStub, task_id: str) -> pb.Task:
    return stub.GetTask(pb.GetTaskRequest(task_id=task_id), timeout=10)
