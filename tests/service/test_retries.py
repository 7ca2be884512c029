"""Retries with full-jitter backoff, dead letters after max_attempts, permanent failures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from tests.support.calls import complete, enqueue, fail, get, lease, new_task, seconds
from tests.support.clock import ShiftedClock
from tests.support.server import InProcessServer

FAILED_PRECONDITION = 9


def _run_after_backoff(clock: ShiftedClock) -> None:
    clock.advance(timedelta(hours=2))  # beyond any backoff the test tasks can draw


def test_fails_twice_then_succeeds_with_three_attempts(server: InProcessServer, clock: ShiftedClock) -> None:
    [task_id] = enqueue(server.tasks, new_task(max_attempts=5))
    for n in (1, 2):
        [t] = lease(server.tasks)
        assert t.attempt == n
        before = datetime.now(UTC) + clock.offset
        result = fail(server.tasks, t, error=f"flaky #{n}")
        assert result.status.code == 0
        assert result.new_status == pb.TASK_STATUS_SCHEDULED
        # Full jitter with the server's default base of 1 s: uniform(0, 1 s * 2^(n-1)).
        delay = result.next_run_at.ToDatetime(UTC) - before
        assert timedelta(seconds=-1) <= delay <= timedelta(seconds=2 ** (n - 1) + 1)
        assert get(server.tasks, task_id).last_error == f"flaky #{n}"
        _run_after_backoff(clock)
    [t] = lease(server.tasks)
    assert t.attempt == 3
    assert complete(server.tasks, t, "ok").status.code == 0

    task = get(server.tasks, task_id)
    assert task.status == pb.TASK_STATUS_SUCCEEDED
    assert task.attempts == 3
    assert [(a.number, a.outcome, a.error) for a in task.history] == [
        (1, "failed", "flaky #1"),
        (2, "failed", "flaky #2"),
        (3, "succeeded", ""),
    ]


def test_always_failing_task_is_dead_after_max_attempts(server: InProcessServer, clock: ShiftedClock) -> None:
    [task_id] = enqueue(server.tasks, new_task(max_attempts=3))
    statuses = []
    for n in range(1, 4):
        [t] = lease(server.tasks)
        statuses.append(fail(server.tasks, t, error=f"error {n}").new_status)
        _run_after_backoff(clock)
    assert statuses == [pb.TASK_STATUS_SCHEDULED, pb.TASK_STATUS_SCHEDULED, pb.TASK_STATUS_DEAD]
    assert lease(server.tasks) == []
    task = get(server.tasks, task_id)
    assert task.status == pb.TASK_STATUS_DEAD
    assert task.attempts == 3
    assert task.last_error == "error 3"
    assert task.HasField("finished_at")
    assert [a.outcome for a in task.history] == ["failed"] * 3


def test_permanent_failure_is_dead_at_once(server: InProcessServer) -> None:
    [task_id] = enqueue(server.tasks, new_task(max_attempts=10))
    [t] = lease(server.tasks)
    assert fail(server.tasks, t, error="bad input", permanent=True).new_status == pb.TASK_STATUS_DEAD
    task = get(server.tasks, task_id)
    assert (task.status, task.attempts, task.last_error) == (pb.TASK_STATUS_DEAD, 1, "bad input")


def test_retry_after_overrides_backoff(server: InProcessServer, clock: ShiftedClock) -> None:
    enqueue(server.tasks, new_task())
    [t] = lease(server.tasks)
    reply = server.tasks.Fail(
        pb.FailRequest(
            failures=[
                pb.Failure(
                    task_id=t.task_id, lease_id=t.lease_id, error="rate limited", retry_after=seconds(300)
                )
            ]
        )
    )
    delay = reply.results[0].next_run_at.ToDatetime(UTC) - (datetime.now(UTC) + clock.offset)
    assert timedelta(seconds=298) <= delay <= timedelta(seconds=301)
    clock.advance(timedelta(seconds=299))
    assert lease(server.tasks) == []
    clock.advance(timedelta(seconds=2))
    assert len(lease(server.tasks)) == 1


def test_per_task_backoff_settings_bound_the_delay(server: InProcessServer) -> None:
    enqueue(server.tasks, new_task(max_attempts=9, backoff_base=seconds(0.01), backoff_cap=seconds(0.02)))
    [t] = lease(server.tasks)
    before = datetime.now(UTC)
    next_run = fail(server.tasks, t).next_run_at.ToDatetime(UTC)
    assert next_run - before <= timedelta(seconds=0.5)


def test_batch_fail_reports_each_item(server: InProcessServer) -> None:
    enqueue(server.tasks, new_task(), new_task())
    a, b = lease(server.tasks, max_tasks=2)
    reply = server.tasks.Fail(
        pb.FailRequest(
            failures=[
                pb.Failure(task_id=a.task_id, lease_id=a.lease_id, error="x", permanent=True),
                pb.Failure(task_id=b.task_id, lease_id=a.lease_id, error="wrong lease"),
            ]
        )
    )
    assert [r.task_id for r in reply.results] == [a.task_id, b.task_id]
    assert reply.results[0].new_status == pb.TASK_STATUS_DEAD
    assert reply.results[1].status.code == FAILED_PRECONDITION
    assert get(server.tasks, b.task_id).status == pb.TASK_STATUS_LEASED
