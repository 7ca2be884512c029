"""A database outage answers UNAVAILABLE with a clear message, and the server recovers after it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import timedelta
from urllib.parse import urlsplit

import grpc
import psycopg
import pytest

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from tests.support.calls import enqueue, get, lease, new_task
from tests.support.databases import DatabaseFactory
from tests.support.server import InProcessServer, server_settings


@pytest.fixture
def isolated_server(fresh_db: str) -> Iterator[InProcessServer]:
    server = InProcessServer(server_settings(fresh_db, pool_timeout=timedelta(seconds=1)))
    yield server
    server.stop()


def _set_outage(databases: DatabaseFactory, url: str, down: bool) -> None:
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(databases.server_url, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS {"false" if down else "true"}')
        if down:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
            )


def test_outage_gives_unavailable_then_service_resumes(
    isolated_server: InProcessServer, databases: DatabaseFactory, fresh_db: str
) -> None:
    server = isolated_server
    [before] = enqueue(server.tasks, new_task())
    _set_outage(databases, fresh_db, down=True)
    try:
        for call in (
            lambda: server.tasks.Enqueue(pb.EnqueueRequest(tasks=[new_task()]), timeout=10),
            lambda: get(server.tasks, before),
            lambda: lease(server.tasks),
        ):
            with pytest.raises(grpc.RpcError) as caught:
                call()
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
            assert caught.value.details().startswith("database unavailable, retry later")
            assert "Traceback" not in caught.value.details()
    finally:
        _set_outage(databases, fresh_db, down=False)

    deadline = time.monotonic() + 20
    while True:
        try:
            [after] = enqueue(server.tasks, new_task())
            break
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNAVAILABLE
            assert time.monotonic() < deadline, "the server did not recover from the outage"
            time.sleep(0.2)
    assert {t.task_id for t in lease(server.tasks, max_tasks=5)} == {before, after}
