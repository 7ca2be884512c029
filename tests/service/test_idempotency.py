"""Idempotent enqueue per (queue, idempotency_key), also when producers race."""

from __future__ import annotations

import threading

import grpc
import psycopg

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from taskqueue_proto.v1 import taskqueue_pb2_grpc as pb_grpc
from tests.support.calls import new_task
from tests.support.server import InProcessServer

ALREADY_EXISTS = 6


def _enqueue_one(stub: pb_grpc.TaskQueueStub, task: pb.NewTask) -> pb.EnqueueResult:
    return stub.Enqueue(pb.EnqueueRequest(tasks=[task]), timeout=10).results[0]


def test_same_key_and_payload_returns_the_same_task(server: InProcessServer) -> None:
    first = _enqueue_one(server.tasks, new_task(payload={"a": 1, "b": 2}, idempotency_key="order-42"))
    # Same JSON value, other spelling: still the same payload.
    again = _enqueue_one(server.tasks, new_task(payload={"b": 2, "a": 1}, idempotency_key="order-42"))
    assert first.created and not again.created
    assert again.status.code == 0
    assert again.task_id == first.task_id


def test_same_key_with_another_payload_is_already_exists(server: InProcessServer) -> None:
    first = _enqueue_one(server.tasks, new_task(payload={"amount": 10}, idempotency_key="charge-7"))
    other = _enqueue_one(server.tasks, new_task(payload={"amount": 99}, idempotency_key="charge-7"))
    assert other.status.code == ALREADY_EXISTS
    assert "idempotency key 'charge-7'" in other.status.message
    assert "different payload" in other.status.message
    assert first.task_id in other.status.message


def test_same_key_with_another_type_is_already_exists(server: InProcessServer) -> None:
    _enqueue_one(server.tasks, new_task(type="a", idempotency_key="k"))
    other = _enqueue_one(server.tasks, new_task(type="b", idempotency_key="k"))
    assert other.status.code == ALREADY_EXISTS and "different type" in other.status.message


def test_keys_are_scoped_per_queue(server: InProcessServer) -> None:
    a = _enqueue_one(server.tasks, new_task(queue="q1", idempotency_key="k"))
    b = _enqueue_one(server.tasks, new_task(queue="q2", idempotency_key="k"))
    assert a.created and b.created and a.task_id != b.task_id


def test_duplicate_key_inside_one_batch_yields_one_task(server: InProcessServer) -> None:
    reply = server.tasks.Enqueue(
        pb.EnqueueRequest(tasks=[new_task(idempotency_key="dup"), new_task(idempotency_key="dup")])
    )
    assert [r.created for r in reply.results] == [True, False]
    assert reply.results[0].task_id == reply.results[1].task_id


def test_twenty_racing_producers_create_exactly_one_task(server: InProcessServer, shared_db: str) -> None:
    barrier = threading.Barrier(20)
    results: list[pb.EnqueueResult] = []
    lock = threading.Lock()

    def produce() -> None:
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.TaskQueueStub(channel)
            task = new_task(payload={"n": 1}, idempotency_key="race")
            barrier.wait()
            result = _enqueue_one(stub, task)
            with lock:
                results.append(result)

    threads = [threading.Thread(target=produce) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)

    assert len(results) == 20
    assert all(r.status.code == 0 for r in results)
    assert len({r.task_id for r in results}) == 1
    assert sum(r.created for r in results) == 1
    with psycopg.connect(shared_db) as conn:
        assert conn.execute("SELECT count(*) FROM tasks WHERE idempotency_key = 'race'").fetchone() == (1,)
