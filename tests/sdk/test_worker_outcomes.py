"""What the worker reports for each way a handler can end, against a real in-process server."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from taskqueue_sdk import Client, Permanent, TaskCancelled, TaskContext, TaskFailed, Worker
from tests.sdk.conftest import wait_for
from tests.sdk.worker_thread import WorkerThread
from tests.support.clock import ShiftedClock
from tests.support.server import InProcessServer


@pytest.fixture
def client(server: InProcessServer) -> Iterator[Client]:
    with Client(server.address) as c:
        yield c


def _worker(server: InProcessServer, **options: Any) -> Worker:
    options.setdefault("queues", ["default"])
    options.setdefault("poll_wait", 1.0)
    return Worker(address=server.address, **options)


def test_return_value_completes_with_result_and_wait_returns_it(
    server: InProcessServer, client: Client
) -> None:
    worker = _worker(server)

    @worker.task("add")
    def add(payload: dict[str, int]) -> int:
        return payload["a"] + payload["b"]

    running = WorkerThread(worker)
    try:
        task_id = client.enqueue("add", {"a": 2, "b": 3})
        assert client.wait(task_id, timeout=10) == 5
    finally:
        running.stop()


def test_ordinary_exception_is_retried_per_policy_then_dead(server: InProcessServer, client: Client) -> None:
    worker = _worker(server)

    @worker.task("flaky")
    async def flaky(payload: None) -> None:
        raise RuntimeError("upstream said no")

    running = WorkerThread(worker)
    try:
        task_id = client.enqueue("flaky", max_attempts=3, backoff_base=0.01, backoff_cap=0.05)
        with pytest.raises(TaskFailed) as caught:
            client.wait(task_id, timeout=15)
    finally:
        running.stop()
    assert caught.value.error == "RuntimeError: upstream said no"
    info = client.get(task_id)
    assert info.attempts == 3
    assert [(a.outcome, a.error) for a in info.history] == [("failed", "RuntimeError: upstream said no")] * 3


def test_permanent_and_non_retryable_errors_are_dead_after_one_attempt(
    server: InProcessServer, client: Client
) -> None:
    worker = _worker(server, non_retryable=[KeyError])

    @worker.task("wrapped")
    def wrapped(payload: None) -> None:
        raise Permanent(ValueError("invoice 42 does not exist"))

    @worker.task("configured")
    def configured(payload: None) -> None:
        raise KeyError("missing")

    running = WorkerThread(worker)
    try:
        ids = [client.enqueue("wrapped", max_attempts=5), client.enqueue("configured", max_attempts=5)]
        for task_id in ids:
            with pytest.raises(TaskFailed):
                client.wait(task_id, timeout=10)
    finally:
        running.stop()
    first, second = (client.get(i) for i in ids)
    assert (first.attempts, first.last_error) == (1, "ValueError: invoice 42 does not exist")
    assert (second.attempts, second.last_error) == (1, "KeyError: 'missing'")


def test_timeout_fails_the_attempt(server: InProcessServer, client: Client) -> None:
    worker = _worker(server)

    @worker.task("slow")
    async def slow(payload: None) -> None:
        await asyncio.sleep(30)

    running = WorkerThread(worker)
    try:
        task_id = client.enqueue("slow", timeout=1, max_attempts=1)
        with pytest.raises(TaskFailed) as caught:
            client.wait(task_id, timeout=10)
    finally:
        running.stop()
    assert caught.value.error == "timed out after 1s"


def test_payload_that_does_not_fit_the_model_fails_permanently(
    server: InProcessServer, client: Client
) -> None:
    from dataclasses import dataclass

    @dataclass
    class Resize:
        width: int
        height: int

    worker = _worker(server)

    @worker.task("resize", model=Resize)
    def resize(job: Resize) -> int:
        return job.width * job.height

    running = WorkerThread(worker)
    try:
        good = client.enqueue("resize", {"width": 3, "height": 4})
        bad = client.enqueue("resize", {"width": 3}, max_attempts=5)
        assert client.wait(good, timeout=10) == 12
        with pytest.raises(TaskFailed) as caught:
            client.wait(bad, timeout=10)
    finally:
        running.stop()
    assert "payload does not fit resize" in caught.value.error
    assert client.get(bad).attempts == 1


def test_cancel_stops_a_running_async_handler(server: InProcessServer, client: Client) -> None:
    started, cancelled = threading.Event(), threading.Event()
    worker = _worker(server, lease_duration=1.5)

    @worker.task("long")
    async def long(payload: None) -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    running = WorkerThread(worker)
    try:
        task_id = client.enqueue("long")
        assert started.wait(10)
        client.cancel(task_id)
        with pytest.raises(TaskCancelled):
            client.wait(task_id, timeout=10)
        assert cancelled.is_set()
    finally:
        running.stop()


def test_lost_lease_cancels_async_handler_and_the_worker_keeps_going(
    server: InProcessServer, client: Client, clock: ShiftedClock
) -> None:
    attempts: list[str] = []
    first_started = threading.Event()
    # One slot: the worker cannot lease the task again until a heartbeat tells it the lease is gone.
    worker = _worker(server, lease_duration=3.0, concurrency=1)

    @worker.task("stuck_once")
    async def stuck_once(payload: None, ctx: TaskContext) -> str:
        if ctx.attempt == 1:
            first_started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                attempts.append(f"attempt 1 cancelled: {ctx.stop_reason}")
                raise
        attempts.append(f"attempt {ctx.attempt} ran")
        return "second time lucky"

    running = WorkerThread(worker)
    try:
        task_id = client.enqueue("stuck_once")
        assert first_started.wait(10)
        clock.advance(timedelta(seconds=10))  # the lease is now expired...
        assert server.reap() == {"queued": 1}  # ...and the reaper gives the task to the next worker
        assert client.wait(task_id, timeout=15) == "second time lucky"
    finally:
        running.stop()
    assert sorted(attempts) == ["attempt 1 cancelled: lease lost", "attempt 2 ran"]
    assert [a.outcome for a in client.get(task_id).history] == ["lease_expired", "succeeded"]


def test_late_result_of_a_sync_handler_is_rejected_and_logged(
    server: InProcessServer, client: Client, clock: ShiftedClock, caplog: pytest.LogCaptureFixture
) -> None:
    first_started = threading.Event()
    worker = _worker(server, lease_duration=3.0, concurrency=2)

    @worker.task("slow_sync")
    def slow_sync(payload: None, ctx: TaskContext) -> str:
        if ctx.attempt == 1:
            first_started.set()
            time.sleep(2.5)  # a sync handler cannot be cancelled; its result comes too late
            return "late"
        return "fresh"

    caplog.set_level(logging.WARNING, logger="taskqueue_sdk.worker")
    running = WorkerThread(worker)
    try:
        task_id = client.enqueue("slow_sync")
        assert first_started.wait(10)
        clock.advance(timedelta(seconds=10))
        assert server.reap() == {"queued": 1}
        assert client.wait(task_id, timeout=15) == "fresh"
        wait_for(lambda: "server rejected the outcome" in caplog.text, what="the late result to be rejected")
    finally:
        running.stop()
    assert client.get(task_id).result == "fresh"
    assert "lease lost" in caplog.text


def test_burst_mode_drains_the_queue_and_returns(server: InProcessServer, client: Client) -> None:
    done: list[int] = []
    worker = _worker(server, concurrency=4)

    @worker.task("count")
    def count(payload: int) -> None:
        done.append(payload)

    from taskqueue_sdk import TaskSpec

    client.enqueue_many([TaskSpec("count", i) for i in range(25)])
    asyncio.run(worker.run(burst=True))
    assert sorted(done) == list(range(25))


def test_context_carries_the_lease_id_of_the_attempt(server: InProcessServer, client: Client) -> None:
    worker = _worker(server)

    @worker.task("who")
    def who(payload: None, ctx: TaskContext) -> str:
        return ctx.lease_id

    running = WorkerThread(worker)
    try:
        task_id = client.enqueue("who")
        lease_id = client.wait(task_id, timeout=10)
    finally:
        running.stop()
    assert len(lease_id) == 36 and lease_id != task_id


def test_a_worker_frozen_between_lease_and_start_does_not_run_stale_work(
    server: InProcessServer, client: Client, clock: ShiftedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Regression (found by the fault battery): a worker stopped with SIGSTOP right after leasing
    # ran the handler when it thawed, after another worker had already completed the task.
    from taskqueue_sdk import worker_runtime

    offset = [0.0]
    monkeypatch.setattr(worker_runtime, "_now", lambda: time.monotonic() + offset[0])
    original_start = worker_runtime.WorkerRuntime._start

    def start_after_a_freeze(self: Any, task: Any, lease_until: float) -> None:
        if task.attempt == 1:
            offset[0] += 10.0  # the process "sleeps" 10 s between the lease and the start
        original_start(self, task, lease_until)

    monkeypatch.setattr(worker_runtime.WorkerRuntime, "_start", start_after_a_freeze)
    ran: list[int] = []
    worker = _worker(server, lease_duration=2.0)

    @worker.task("once")
    def once(payload: None, ctx: TaskContext) -> int:
        ran.append(ctx.attempt)
        return ctx.attempt

    running = WorkerThread(worker)
    try:
        task_id = client.enqueue("once")
        wait_for(lambda: client.get(task_id).status == "leased", what="the first lease")
        clock.advance(timedelta(seconds=10))
        assert server.reap() == {"queued": 1}
        assert client.wait(task_id, timeout=15) == 2
    finally:
        running.stop()
    assert ran == [2]
