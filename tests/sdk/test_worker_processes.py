"""The worker as a real process, with real signals: SIGKILL, SIGTERM, and a server restart."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from taskqueue_sdk import Client, TaskSpec
from tests.sdk.conftest import WorkerProcess, read_records, wait_for
from tests.support.server import PROJECT_ROOT, ServerProcess


def test_example_worker_processes_a_thousand_tasks_from_the_example_producer(
    server_process: ServerProcess, tmp_path: Path
) -> None:
    env_address = {"TASKQUEUE_ADDRESS": server_process.address}
    worker_cli = Path(sys.executable).parent / "taskqueue-worker"
    worker = subprocess.Popen(
        [str(worker_cli), "examples.email_worker:worker", "--concurrency", "16"],
        cwd=PROJECT_ROOT,
        env={**_clean_env(), **env_address},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        producer = subprocess.run(
            [sys.executable, "examples/producer.py", "--count", "1000"],
            cwd=PROJECT_ROOT,
            env={**_clean_env(), **env_address},
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert producer.returncode == 0, producer.stdout + producer.stderr
        assert "1000 succeeded, 0 failed" in producer.stdout
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(30) == 0
    from taskqueue_proto.v1 import admin_pb2

    [stats] = server_process.admin.QueueStats(admin_pb2.QueueStatsRequest(queue="emails")).queues
    assert (stats.succeeded, stats.queued, stats.leased, stats.dead) == (1000, 0, 0, 0)


def _clean_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("TASKQUEUE_")}


def test_task_of_a_sigkilled_worker_is_completed_by_another(
    server_process: ServerProcess, records: Path
) -> None:
    with Client(server_process.address) as client:
        task_id = client.enqueue("sleep", {"seconds": 3, "result": "done"}, queue="sample")
        first = WorkerProcess(server_process.address, records)
        wait_for(lambda: any(r[0] == "start" for r in read_records(records)), what="the task to start")
        first.proc.send_signal(signal.SIGKILL)
        first.wait(10)
        second = WorkerProcess(server_process.address, records)
        try:
            assert client.wait(task_id, timeout=30) == "done"
        finally:
            second.proc.send_signal(signal.SIGTERM)
            second.wait(20)
        info = client.get(task_id)
    starts = [r for r in read_records(records) if r[0] == "start"]
    ends = [r for r in read_records(records) if r[0] == "end"]
    assert [(r[2], r[3]) for r in starts] == [(1, first.proc.pid), (2, second.proc.pid)]
    assert [(r[2], r[3]) for r in ends] == [(2, second.proc.pid)]
    assert [a.outcome for a in info.history] == ["lease_expired", "succeeded"]


def test_sigterm_lets_the_running_task_finish_and_leases_nothing_new(
    server_process: ServerProcess, records: Path
) -> None:
    with Client(server_process.address) as client:
        running = client.enqueue("sleep", {"seconds": 2, "result": 1}, queue="sample")
        worker = WorkerProcess(server_process.address, records, "--concurrency", "1")
        wait_for(lambda: any(r[0] == "start" for r in read_records(records)), what="the task to start")
        worker.proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        later = client.enqueue("sleep", {"seconds": 0}, queue="sample")
        assert worker.wait(15) == 0, worker.log()
        assert time.monotonic() - signalled < 10  # within the grace period
        assert client.get(running).status == "succeeded"
        untouched = client.get(later)
        assert (untouched.status, untouched.attempts, untouched.history) == ("queued", 0, ())
    assert [r[0] for r in read_records(records)] == ["start", "end"]


def test_handler_running_three_lease_durations_is_kept_alive_and_runs_once(
    server_process: ServerProcess, records: Path
) -> None:
    with Client(server_process.address) as client:
        task_id = client.enqueue("sleep", {"seconds": 3.5, "result": "slow"}, queue="sample")
        worker = WorkerProcess(server_process.address, records, "--lease-duration", "1")
        try:
            assert client.wait(task_id, timeout=30) == "slow"
        finally:
            worker.proc.send_signal(signal.SIGTERM)
            worker.wait(20)
        info = client.get(task_id)
    assert [r[0] for r in read_records(records)] == ["start", "end"]
    assert info.attempts == 1 and [a.outcome for a in info.history] == ["succeeded"]


def test_worker_rides_out_a_server_restart(fresh_db: str, records: Path) -> None:
    server = ServerProcess(fresh_db, "--reap-interval", "0.5")
    server.wait_serving()
    worker = WorkerProcess(server.address, records)
    try:
        with Client(server.address, timeout=30) as client:
            ids = [
                r.task_id
                for r in client.enqueue_many(
                    [TaskSpec("sleep", {"seconds": 0.05, "result": i}, queue="sample") for i in range(60)]
                )
            ]
            wait_for(lambda: len(read_records(records)) >= 10, what="some tasks to run")
            assert server.stop() == 0
            time.sleep(1.5)  # the worker sees UNAVAILABLE and backs off meanwhile
            server = ServerProcess(fresh_db, "--reap-interval", "0.5", port=server.port)
            server.wait_serving()
            results = [client.wait(i, timeout=60) for i in ids]
        assert results == list(range(60))
        assert worker.proc.poll() is None, "the worker must keep running through the outage"
    finally:
        worker.proc.send_signal(signal.SIGTERM)
        worker.wait(20)
        server.stop()
    assert "lease failed" in worker.log()  # it noticed the outage and retried
