"""Fenced leases: once a lease expires or is taken over, its holder can change nothing."""

from __future__ import annotations

from datetime import timedelta

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from tests.support.calls import complete, enqueue, fail, get, heartbeat, lease, new_task
from tests.support.clock import ShiftedClock
from tests.support.server import InProcessServer

FAILED_PRECONDITION = 9
NOT_FOUND = 5


def test_stale_holder_is_rejected_after_reaper_requeues(server: InProcessServer, clock: ShiftedClock) -> None:
    [task_id] = enqueue(server.tasks, new_task(max_attempts=3))
    [old] = lease(server.tasks, worker="slow-worker", lease_seconds=5)

    clock.advance(timedelta(seconds=6))
    assert server.reap() == {"queued": 1}
    assert get(server.tasks, task_id).status == pb.TASK_STATUS_QUEUED

    [new] = lease(server.tasks, worker="fast-worker")
    assert new.task_id == task_id and new.attempt == 2 and new.lease_id != old.lease_id

    for reply in (
        heartbeat(server.tasks, old),
        complete(server.tasks, old, "stale"),
        fail(server.tasks, old),
    ):
        assert reply.status.code == FAILED_PRECONDITION
        assert "lease lost" in reply.status.message
        assert "leased again by another worker" in reply.status.message

    assert complete(server.tasks, new, "fresh").status.code == 0
    assert complete(server.tasks, old, "stale").status.code == FAILED_PRECONDITION
    task = get(server.tasks, task_id)
    assert task.status == pb.TASK_STATUS_SUCCEEDED
    assert task.result == b'"fresh"'
    assert [(a.number, a.worker_id, a.outcome) for a in task.history] == [
        (1, "slow-worker", "lease_expired"),
        (2, "fast-worker", "succeeded"),
    ]
    assert "slow-worker stopped heartbeating" in task.history[0].error


def test_expired_lease_is_rejected_even_before_the_reaper_runs(
    server: InProcessServer, clock: ShiftedClock
) -> None:
    enqueue(server.tasks, new_task())
    [t] = lease(server.tasks, lease_seconds=5)
    clock.advance(timedelta(seconds=6))
    reply = complete(server.tasks, t, "late")
    assert reply.status.code == FAILED_PRECONDITION
    assert "expired" in reply.status.message
    assert get(server.tasks, t.task_id).status == pb.TASK_STATUS_LEASED  # the reaper decides next


def test_heartbeat_extends_the_lease(server: InProcessServer, clock: ShiftedClock) -> None:
    enqueue(server.tasks, new_task())
    [t] = lease(server.tasks, lease_seconds=10)
    for _ in range(3):
        clock.advance(timedelta(seconds=8))
        reply = heartbeat(server.tasks, t, lease_seconds=10)
        assert reply.status.code == 0 and not reply.cancel_requested
        assert server.reap() == {}
    assert complete(server.tasks, t).status.code == 0


def test_reaper_sends_task_out_of_attempts_to_dead(server: InProcessServer, clock: ShiftedClock) -> None:
    [task_id] = enqueue(server.tasks, new_task(max_attempts=1))
    lease(server.tasks, lease_seconds=5)
    clock.advance(timedelta(seconds=6))
    assert server.reap() == {"dead": 1}
    task = get(server.tasks, task_id)
    assert task.status == pb.TASK_STATUS_DEAD
    assert "lease expired" in task.last_error


def test_reports_for_unknown_tasks_are_not_found(server: InProcessServer) -> None:
    ghost = pb.LeasedTask(
        task_id="00000000-0000-7000-8000-000000000001", lease_id="00000000-0000-4000-8000-000000000002"
    )
    assert complete(server.tasks, ghost).status.code == NOT_FOUND
    assert "not found" in heartbeat(server.tasks, ghost).status.message


def test_two_reapers_never_reap_one_task_twice(server: InProcessServer, clock: ShiftedClock) -> None:
    import asyncio

    enqueue(server.tasks, *[new_task(payload=i) for i in range(200)])
    lease(server.tasks, max_tasks=200, lease_seconds=5)
    clock.advance(timedelta(seconds=6))

    async def both() -> list[dict[str, int]]:
        return list(await asyncio.gather(server.app.reaper.run_once(), server.app.reaper.run_once()))

    results = server.run(both())
    assert sum(r.get("queued", 0) for r in results) == 200
    leased = lease(server.tasks, max_tasks=500)
    assert len(leased) == 200 and all(t.attempt == 2 for t in leased)


def test_release_hands_the_lease_back_without_using_an_attempt(server: InProcessServer) -> None:
    [task_id] = enqueue(server.tasks, new_task(max_attempts=1))
    [t] = lease(server.tasks)
    ref = pb.LeaseRef(task_id=t.task_id, lease_id=t.lease_id)
    reply = server.tasks.Release(pb.ReleaseRequest(worker_id="w", leases=[ref]))
    assert reply.results[0].status.code == 0
    task = get(server.tasks, task_id)
    assert (task.status, task.attempts) == (pb.TASK_STATUS_QUEUED, 0)
    again = server.tasks.Release(pb.ReleaseRequest(worker_id="w", leases=[ref]))
    assert again.results[0].status.code == FAILED_PRECONDITION
    [t2] = lease(server.tasks)
    assert t2.attempt == 1  # max_attempts=1 and it still gets its one real attempt
    assert complete(server.tasks, t2).status.code == 0
