"""`taskqueue serve` as a real process: health, graceful SIGTERM, refusing an unmigrated schema."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.support.calls import enqueue, lease, new_task
from tests.support.databases import DatabaseFactory
from tests.support.server import PROJECT_ROOT, ServerProcess


def test_serves_health_and_reflection_and_stops_on_sigterm(fresh_db: str) -> None:
    server = ServerProcess(fresh_db)
    try:
        server.wait_serving()
        probe = subprocess.run(
            [sys.executable, "-m", "taskqueue", "health", "--address", server.address],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert (probe.returncode, probe.stdout.strip()) == (0, "SERVING")
        for service in ("taskqueue.v1.TaskQueue", "taskqueue.v1.Admin"):
            reply = server.health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        stub = reflection_pb2_grpc.ServerReflectionStub(server.channel)
        [answer] = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
        names = {s.name for s in answer.list_services_response.service}
        assert {"taskqueue.v1.TaskQueue", "taskqueue.v1.Admin", "grpc.health.v1.Health"} <= names

        # A long-poll in flight at SIGTERM is answered (empty), not cut off.
        poll_result: list[object] = []
        poller = threading.Thread(target=lambda: poll_result.append(lease(server.tasks, wait=30)))
        poller.start()
        time.sleep(0.3)
        started = time.monotonic()
        server.signal(signal.SIGTERM)
        assert server.proc.wait(15) == 0
        poller.join(5)
        assert poll_result == [[]]
        assert time.monotonic() - started < 10
        assert "stopped" in server.log()
    finally:
        server.stop()


def test_accepted_tasks_survive_a_server_restart(fresh_db: str) -> None:
    first = ServerProcess(fresh_db)
    first.wait_serving()
    ids = enqueue(first.tasks, *[new_task(payload=i) for i in range(10)])
    first.proc.kill()  # SIGKILL: no graceful anything
    first.proc.wait()
    first.stop()
    second = ServerProcess(fresh_db)
    try:
        second.wait_serving()
        assert {t.task_id for t in lease(second.tasks, max_tasks=20)} == set(ids)
    finally:
        second.stop()


def test_refuses_to_start_on_an_unmigrated_database(databases: DatabaseFactory) -> None:
    empty = databases.create_empty()
    server = ServerProcess(empty)
    try:
        assert server.proc.wait(30) != 0
        log = server.log()
        assert "taskqueue migrate" in log
        assert "none (empty database)" in log
    finally:
        server.stop()


def test_migrate_command_then_serve(databases: DatabaseFactory) -> None:
    empty = databases.create_empty()
    done = subprocess.run(
        [sys.executable, "-m", "taskqueue", "migrate", "--database-url", empty],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    server = ServerProcess(empty)
    try:
        server.wait_serving()
    finally:
        assert server.stop() == 0


def test_embedded_postgres_when_no_url_is_given(tmp_path: Path) -> None:
    server = ServerProcess(None, "--data-dir", str(tmp_path / "data"))
    try:
        server.wait_serving(timeout=120)
        [task_id] = enqueue(server.tasks, new_task())
        assert [t.task_id for t in lease(server.tasks)] == [task_id]
    finally:
        assert server.stop() == 0
    assert (tmp_path / "data" / "pgdata" / "PG_VERSION").exists()
