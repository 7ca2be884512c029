"""CancelTask: queued tasks stop at once, running ones hear it on their next heartbeat."""

from __future__ import annotations

from datetime import timedelta

import grpc
import pytest

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from tests.support.calls import complete, enqueue, fail, get, heartbeat, lease, new_task
from tests.support.clock import ShiftedClock
from tests.support.server import InProcessServer


def _cancel(server: InProcessServer, task_id: str) -> pb.Task:
    return server.tasks.CancelTask(pb.CancelTaskRequest(task_id=task_id))


def test_queued_task_is_cancelled_at_once(server: InProcessServer) -> None:
    [task_id] = enqueue(server.tasks, new_task())
    task = _cancel(server, task_id)
    assert task.status == pb.TASK_STATUS_CANCELLED and task.HasField("finished_at")
    assert lease(server.tasks) == []


def test_running_task_learns_of_cancel_on_heartbeat_and_fail_cancels(server: InProcessServer) -> None:
    [task_id] = enqueue(server.tasks, new_task())
    [t] = lease(server.tasks)
    task = _cancel(server, task_id)
    assert task.status == pb.TASK_STATUS_LEASED and task.cancel_requested
    beat = heartbeat(server.tasks, t)
    assert beat.status.code == 0 and beat.cancel_requested
    result = fail(server.tasks, t, error="stopped: cancelled")
    assert result.new_status == pb.TASK_STATUS_CANCELLED
    assert get(server.tasks, task_id).status == pb.TASK_STATUS_CANCELLED


def test_cancelled_running_task_whose_worker_vanished_ends_cancelled(
    server: InProcessServer, clock: ShiftedClock
) -> None:
    [task_id] = enqueue(server.tasks, new_task(max_attempts=5))
    lease(server.tasks, lease_seconds=5)
    _cancel(server, task_id)
    clock.advance(timedelta(seconds=6))
    assert server.reap() == {"cancelled": 1}
    assert get(server.tasks, task_id).status == pb.TASK_STATUS_CANCELLED


def test_work_finished_despite_a_late_cancel_is_recorded_as_succeeded(server: InProcessServer) -> None:
    # The work is done by then; reporting it as cancelled would hide that it ran.
    [task_id] = enqueue(server.tasks, new_task())
    [t] = lease(server.tasks)
    _cancel(server, task_id)
    assert complete(server.tasks, t, "done").status.code == 0
    assert get(server.tasks, task_id).status == pb.TASK_STATUS_SUCCEEDED


def test_cancelling_a_finished_task_is_failed_precondition(server: InProcessServer) -> None:
    [task_id] = enqueue(server.tasks, new_task())
    [t] = lease(server.tasks)
    complete(server.tasks, t)
    with pytest.raises(grpc.RpcError) as caught:
        _cancel(server, task_id)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert caught.value.details() == (
        f"task {task_id} is already succeeded; only queued or leased tasks can be cancelled"
    )
