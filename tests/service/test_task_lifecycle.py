"""A task's life through the real gRPC API: enqueue, lease, complete, read back."""

from __future__ import annotations

import json

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from tests.support.calls import complete, enqueue, get, lease, new_task
from tests.support.server import InProcessServer


def test_enqueued_task_is_leased_completed_and_reads_back(server: InProcessServer) -> None:
    [task_id] = enqueue(server.tasks, new_task(payload={"to": "ada@example.com"}))
    assert get(server.tasks, task_id).status == pb.TASK_STATUS_QUEUED

    [leased] = lease(server.tasks)
    assert leased.task_id == task_id
    assert leased.attempt == 1
    assert json.loads(leased.payload) == {"to": "ada@example.com"}
    assert get(server.tasks, task_id).status == pb.TASK_STATUS_LEASED

    assert complete(server.tasks, leased, {"sent": True}).status.code == 0

    task = get(server.tasks, task_id)
    assert task.status == pb.TASK_STATUS_SUCCEEDED
    assert json.loads(task.result) == {"sent": True}
    assert task.attempts == 1
    assert [(a.number, a.outcome, a.worker_id) for a in task.history] == [(1, "succeeded", "worker-1")]
    assert task.HasField("finished_at") and task.HasField("started_at")


def test_lease_takes_highest_priority_then_oldest(server: InProcessServer) -> None:
    low, high_old, high_new = enqueue(
        server.tasks,
        new_task(priority=0),
        new_task(priority=5),
        new_task(priority=5),
    )
    order = [lease(server.tasks)[0].task_id for _ in range(3)]
    assert order == [high_old, high_new, low]


def test_lease_filters_by_task_type_and_queue(server: InProcessServer) -> None:
    enqueue(server.tasks, new_task(queue="a", type="resize"), new_task(queue="b", type="email"))
    assert lease(server.tasks, "a", types=("email",)) == []
    [t] = lease(server.tasks, "b", types=("email",))
    assert (t.queue, t.type) == ("b", "email")


def test_batch_lease_takes_up_to_max_tasks(server: InProcessServer) -> None:
    enqueue(server.tasks, *[new_task(payload=i) for i in range(7)])
    first = lease(server.tasks, max_tasks=5)
    second = lease(server.tasks, max_tasks=5)
    assert len(first) == 5 and len(second) == 2
    assert len({t.task_id for t in first + second}) == 7
    assert len({t.lease_id for t in first + second}) == 7


def test_delayed_task_is_scheduled_until_due(server: InProcessServer, clock) -> None:  # type: ignore[no-untyped-def]
    from datetime import timedelta

    from tests.support.calls import seconds

    [task_id] = enqueue(server.tasks, new_task(delay=seconds(60)))
    assert get(server.tasks, task_id).status == pb.TASK_STATUS_SCHEDULED
    assert lease(server.tasks) == []
    clock.advance(timedelta(seconds=61))
    [t] = lease(server.tasks)
    assert t.task_id == task_id


def test_concurrent_enqueues_sharing_statements_each_get_their_own_tasks(server: InProcessServer) -> None:
    # Concurrent calls are merged into shared INSERTs on the server; every caller must still get
    # back exactly the ids of its own tasks, in its own order.
    from concurrent.futures import ThreadPoolExecutor

    def produce(n: int) -> tuple[int, list[str]]:
        ids = enqueue(server.tasks, *[new_task(payload={"caller": n, "i": i}) for i in range(n % 3 + 1)])
        return n, ids

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(produce, range(48)))
    for n, ids in results:
        assert [json.loads(get(server.tasks, i).payload) for i in ids] == [
            {"caller": n, "i": i} for i in range(n % 3 + 1)
        ]
