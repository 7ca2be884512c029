"""Long-polling Lease wakes within milliseconds of an Enqueue, in one process or across two."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from taskqueue_proto.v1 import taskqueue_pb2_grpc as pb_grpc
from tests.support.calls import enqueue, lease, new_task, seconds
from tests.support.server import InProcessServer, ServerProcess

WAIT = 20.0  # the long-poll's own limit; every wake-up below must come far sooner


class Poller:
    """Runs one long-polling Lease in a thread and records when it returned."""

    def __init__(self, stub: pb_grpc.TaskQueueStub, queue: str = "default") -> None:
        self.tasks: list[pb.LeasedTask] = []
        self.returned_at = 0.0
        self._thread = threading.Thread(target=self._run, args=(stub, queue))
        self._thread.start()

    def _run(self, stub: pb_grpc.TaskQueueStub, queue: str) -> None:
        self.tasks = lease(stub, queue, wait=WAIT)
        self.returned_at = time.monotonic()

    def join(self) -> None:
        self._thread.join(WAIT + 10)


def test_long_poll_returns_promptly_after_enqueue(server: InProcessServer) -> None:
    poller = Poller(server.tasks)
    time.sleep(0.3)  # let the Lease reach its wait; the point is what happens while it waits
    [task_id] = enqueue(server.tasks, new_task())
    enqueued_at = time.monotonic()
    poller.join()
    assert [t.task_id for t in poller.tasks] == [task_id]
    assert poller.returned_at - enqueued_at < 0.5


def test_long_poll_wakes_when_a_delayed_task_becomes_due(server: InProcessServer) -> None:
    poller = Poller(server.tasks)
    time.sleep(0.2)
    start = time.monotonic()
    [task_id] = enqueue(server.tasks, new_task(delay=seconds(0.5)))
    poller.join()
    assert [t.task_id for t in poller.tasks] == [task_id]
    assert 0.4 <= poller.returned_at - start < 1.5


def test_long_poll_ignores_other_queues_and_times_out_empty(server: InProcessServer) -> None:
    start = time.monotonic()
    enqueue(server.tasks, new_task(queue="elsewhere"))
    assert lease(server.tasks, "default", wait=0.5) == []
    assert 0.45 <= time.monotonic() - start < 3


@pytest.fixture
def two_servers(fresh_db: str) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    a, b = ServerProcess(fresh_db), ServerProcess(fresh_db)
    try:
        a.wait_serving()
        b.wait_serving()
        yield a, b
    finally:
        a.stop()
        b.stop()


def test_long_poll_on_one_server_wakes_on_enqueue_through_another(
    two_servers: tuple[ServerProcess, ServerProcess],
) -> None:
    a, b = two_servers
    poller = Poller(a.tasks)
    time.sleep(0.5)
    [task_id] = enqueue(b.tasks, new_task())
    enqueued_at = time.monotonic()
    poller.join()
    assert [t.task_id for t in poller.tasks] == [task_id]
    assert poller.returned_at - enqueued_at < 0.5


def test_abandoned_long_poll_does_not_strand_tasks(server: InProcessServer) -> None:
    import grpc

    # A Lease whose caller gives up (deadline) while it waits must not keep any task leased.
    with pytest.raises(grpc.RpcError) as caught:
        server.tasks.Lease(pb.LeaseRequest(worker_id="w", queues=["default"], wait=seconds(5)), timeout=0.3)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    [task_id] = enqueue(server.tasks, new_task())
    [t] = lease(server.tasks, wait=2)
    assert t.task_id == task_id and t.attempt == 1
