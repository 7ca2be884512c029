"""Every bad request gets the right status code and a message naming the field and the bound,
and changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
import psycopg
import pytest
from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from taskqueue_proto.v1 import admin_pb2 as admin_pb
from taskqueue_proto.v1 import taskqueue_pb2 as pb
from tests.support.calls import new_task, seconds
from tests.support.server import InProcessServer

INVALID = grpc.StatusCode.INVALID_ARGUMENT
UUID = "0190a4b2-0000-7000-8000-000000000001"
MIB = 1024 * 1024


def _task(**fields: Any) -> pb.NewTask:
    base = {"queue": "q", "type": "t", "payload": b"{}"}
    base.update(fields)
    return pb.NewTask(**base)


def enqueue(*tasks: pb.NewTask) -> Callable[[InProcessServer], Any]:
    return lambda s: s.tasks.Enqueue(pb.EnqueueRequest(tasks=list(tasks)))


def lease(**fields: Any) -> Callable[[InProcessServer], Any]:
    base: dict[str, Any] = {"worker_id": "w", "queues": ["q"]}
    base.update(fields)
    return lambda s: s.tasks.Lease(pb.LeaseRequest(**base))


def heartbeat(*refs: pb.LeaseRef, **fields: Any) -> Callable[[InProcessServer], Any]:
    return lambda s: s.tasks.Heartbeat(pb.HeartbeatRequest(leases=list(refs), **fields))


def complete(*items: pb.Completion) -> Callable[[InProcessServer], Any]:
    return lambda s: s.tasks.Complete(pb.CompleteRequest(completions=list(items)))


def fail(*items: pb.Failure) -> Callable[[InProcessServer], Any]:
    return lambda s: s.tasks.Fail(pb.FailRequest(failures=list(items)))


CASES: list[tuple[str, Callable[[InProcessServer], Any], grpc.StatusCode, str]] = [
    # Enqueue
    ("no tasks", enqueue(), INVALID, "tasks is empty; send 1 to 1000 items"),
    ("too many tasks", enqueue(*[_task()] * 1001), INVALID, "tasks has 1001 items; the limit is 1000"),
    (
        "empty queue",
        enqueue(_task(queue="")),
        INVALID,
        "tasks[0].queue is empty; it must be 1 to 128 characters",
    ),
    (
        "long queue",
        enqueue(_task(queue="q" * 129)),
        INVALID,
        "tasks[0].queue is 129 characters; the limit is 128",
    ),
    ("queue with space", enqueue(_task(queue="a b")), INVALID, "tasks[0].queue 'a b' contains whitespace"),
    ("empty type", enqueue(_task(), _task(type="")), INVALID, "tasks[1].type is empty"),
    (
        "long type",
        enqueue(_task(type="t" * 200)),
        INVALID,
        "tasks[0].type is 200 characters; the limit is 128",
    ),
    ("payload not JSON", enqueue(_task(payload=b"{nope")), INVALID, "tasks[0].payload is not valid JSON"),
    ("payload not UTF-8", enqueue(_task(payload=b'"\xff"')), INVALID, "tasks[0].payload is not valid UTF-8"),
    ("payload NaN", enqueue(_task(payload=b"NaN")), INVALID, "tasks[0].payload is not valid JSON"),
    ("payload \\u0000", enqueue(_task(payload=b'"\\u0000"')), INVALID, "tasks[0].payload contains \\u0000"),
    ("payload lone surrogate", enqueue(_task(payload=b'"\\ud800"')), INVALID, "unpaired surrogate"),
    (
        "payload too big",
        enqueue(_task(payload=b'"' + b"x" * (MIB + 10) + b'"')),
        INVALID,
        "tasks[0].payload is 1 MiB; the limit is 1 MiB",
    ),
    (
        "negative delay",
        enqueue(_task(delay=seconds(-5))),
        INVALID,
        "tasks[0].delay is -5s; it must be between 0s and",
    ),
    (
        "absurd delay",
        enqueue(_task(delay=Duration(seconds=10 * 365 * 86400))),
        INVALID,
        "tasks[0].delay is 315360000s (3650 days); it must be between 0s and 31536000s (365 days)",
    ),
    (
        "run_at too far",
        enqueue(_task(run_at=Timestamp(seconds=4_000_000_000))),
        INVALID,
        "tasks[0].run_at is 2096-10-02T07:06:40+00:00; it may be at most 365 days ahead",
    ),
    (
        "negative attempts",
        enqueue(_task(max_attempts=-1)),
        INVALID,
        "tasks[0].max_attempts is -1; it must be between 1 and 1000",
    ),
    (
        "absurd attempts",
        enqueue(_task(max_attempts=10**6)),
        INVALID,
        "max_attempts is 1000000; it must be between 1 and 1000",
    ),
    (
        "priority",
        enqueue(_task(priority=5000)),
        INVALID,
        "tasks[0].priority is 5000; it must be between -1000 and 1000",
    ),
    (
        "timeout zero",
        enqueue(_task(timeout=seconds(0))),
        INVALID,
        "tasks[0].timeout is 0s; it must be between 1s and",
    ),
    (
        "long key",
        enqueue(_task(idempotency_key="k" * 300)),
        INVALID,
        "idempotency_key is 300 characters; the limit is 256",
    ),
    (
        "backoff base above cap",
        enqueue(_task(backoff_base=seconds(10), backoff_cap=seconds(1))),
        INVALID,
        "tasks[0].backoff_base (10s) is larger than backoff_cap (1s)",
    ),
    # Lease
    ("no worker", lease(worker_id=""), INVALID, "worker_id is empty"),
    ("no queues", lease(queues=[]), INVALID, "queues is empty; name at least one queue to lease from"),
    ("bad queue name", lease(queues=["ok", ""]), INVALID, "queues[1] is empty"),
    (
        "lease too short",
        lease(lease_duration=seconds(0.1)),
        INVALID,
        "lease_duration is 0.1s; it must be between 1s and 43200s",
    ),
    (
        "lease too long",
        lease(lease_duration=seconds(86400)),
        INVALID,
        "lease_duration is 86400s (1 day); it must be between 1s and 43200s",
    ),
    ("negative lease", lease(lease_duration=seconds(-1)), INVALID, "lease_duration is -1s"),
    ("max_tasks negative", lease(max_tasks=-3), INVALID, "max_tasks is -3; it must be between 1 and 1000"),
    ("max_tasks huge", lease(max_tasks=5000), INVALID, "max_tasks is 5000; it must be between 1 and 1000"),
    ("wait too long", lease(wait=seconds(3600)), INVALID, "wait is 3600s; it must be between 0s and 60s"),
    ("wait negative", lease(wait=seconds(-1)), INVALID, "wait is -1s"),
    # Heartbeat / Complete / Fail
    ("heartbeat empty", heartbeat(), INVALID, "leases is empty"),
    (
        "malformed task id",
        heartbeat(pb.LeaseRef(task_id="abc", lease_id=UUID)),
        INVALID,
        "leases[0].task_id 'abc' is not a valid UUID",
    ),
    (
        "malformed lease id",
        complete(pb.Completion(task_id=UUID, lease_id="x-y")),
        INVALID,
        "completions[0].lease_id 'x-y' is not a valid UUID",
    ),
    (
        "duplicate ids",
        complete(pb.Completion(task_id=UUID, lease_id=UUID), pb.Completion(task_id=UUID, lease_id=UUID)),
        INVALID,
        "completions names the same task_id twice",
    ),
    (
        "result not JSON",
        complete(pb.Completion(task_id=UUID, lease_id=UUID, result=b"{")),
        INVALID,
        "completions[0].result is not valid JSON",
    ),
    ("fail empty", fail(), INVALID, "failures is empty"),
    (
        "negative retry_after",
        fail(pb.Failure(task_id=UUID, lease_id=UUID, retry_after=seconds(-2))),
        INVALID,
        "failures[0].retry_after is -2s",
    ),
    (
        "heartbeat lease too long",
        heartbeat(pb.LeaseRef(task_id=UUID, lease_id=UUID), lease_duration=seconds(10**6)),
        INVALID,
        "lease_duration is 1000000s",
    ),
    # GetTask / CancelTask
    (
        "get malformed id",
        lambda s: s.tasks.GetTask(pb.GetTaskRequest(task_id="42")),
        INVALID,
        "task_id '42' is not a valid UUID",
    ),
    (
        "get empty id",
        lambda s: s.tasks.GetTask(pb.GetTaskRequest()),
        INVALID,
        "task_id '' is not a valid UUID",
    ),
    (
        "get unknown id",
        lambda s: s.tasks.GetTask(pb.GetTaskRequest(task_id=UUID)),
        grpc.StatusCode.NOT_FOUND,
        f"task {UUID} not found",
    ),
    (
        "cancel unknown id",
        lambda s: s.tasks.CancelTask(pb.CancelTaskRequest(task_id=UUID)),
        grpc.StatusCode.NOT_FOUND,
        f"task {UUID} not found",
    ),
    # Admin
    (
        "page size",
        lambda s: s.admin.ListTasks(admin_pb.ListTasksRequest(page_size=5000)),
        INVALID,
        "page_size is 5000; it must be between 1 and 1000",
    ),
    (
        "page token",
        lambda s: s.admin.ListTasks(admin_pb.ListTasksRequest(page_token="garbage!")),
        INVALID,
        "page_token is malformed",
    ),
    (
        "unknown status",
        lambda s: s.admin.ListTasks(admin_pb.ListTasksRequest(filter=admin_pb.TaskFilter(status=99))),
        INVALID,
        "filter.status 99 is not a known TaskStatus",
    ),
    (
        "purge live tasks",
        lambda s: s.admin.PurgeTasks(
            admin_pb.PurgeTasksRequest(filter=admin_pb.TaskFilter(status=pb.TASK_STATUS_QUEUED))
        ),
        INVALID,
        "filter.status must be SUCCEEDED, DEAD or CANCELLED",
    ),
    (
        "requeue ids and filter",
        lambda s: s.admin.RequeueDead(
            admin_pb.RequeueDeadRequest(task_ids=[UUID], filter=admin_pb.TaskFilter(queue="q"))
        ),
        INVALID,
        "give either task_ids or filter, not both",
    ),
    (
        "requeue bad id",
        lambda s: s.admin.RequeueDead(admin_pb.RequeueDeadRequest(task_ids=["nope"])),
        INVALID,
        "task_ids[0] 'nope' is not a valid UUID",
    ),
    (
        "requeue non-dead status",
        lambda s: s.admin.RequeueDead(
            admin_pb.RequeueDeadRequest(filter=admin_pb.TaskFilter(status=pb.TASK_STATUS_SUCCEEDED))
        ),
        INVALID,
        "filter.status must be unset or DEAD",
    ),
]


@pytest.mark.parametrize(("call", "code", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_request_is_rejected_with_code_and_message(
    server: InProcessServer,
    shared_db: str,
    call: Callable[[InProcessServer], Any],
    code: grpc.StatusCode,
    message: str,
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        call(server)
    assert caught.value.code() == code
    assert message in caught.value.details()
    with psycopg.connect(shared_db) as conn:
        assert conn.execute("SELECT count(*) FROM tasks").fetchone() == (0,)  # nothing applied


def test_one_bad_task_rejects_the_whole_batch(server: InProcessServer, shared_db: str) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        server.tasks.Enqueue(pb.EnqueueRequest(tasks=[new_task(), new_task(queue="")]))
    assert "tasks[1].queue is empty" in caught.value.details()
    with psycopg.connect(shared_db) as conn:
        assert conn.execute("SELECT count(*) FROM tasks").fetchone() == (0,)


def test_overlong_error_message_is_truncated_not_refused(server: InProcessServer) -> None:
    from tests.support.calls import enqueue as put
    from tests.support.calls import get
    from tests.support.calls import lease as take

    put(server.tasks, new_task())
    [t] = take(server.tasks)
    reply = server.tasks.Fail(
        pb.FailRequest(failures=[pb.Failure(task_id=t.task_id, lease_id=t.lease_id, error="e\x00" * 10_000)])
    )
    assert reply.results[0].status.code == 0
    last_error = get(server.tasks, t.task_id).last_error
    assert len(last_error) < 9000 and last_error.endswith("[truncated from 20000 characters]")
