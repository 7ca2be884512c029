"""The producer client: typed errors mapped from gRPC status codes, retries, options."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from taskqueue_sdk import (
    AsyncClient,
    Client,
    DeadlineExceeded,
    DuplicateTask,
    FailedPrecondition,
    InvalidRequest,
    TaskNotFound,
    TaskSpec,
    Unavailable,
)
from tests.support.calls import complete, lease
from tests.support.server import InProcessServer

UNKNOWN = "0190a4b2-0000-7000-8000-0000000000ff"


@pytest.fixture
def client(server: InProcessServer) -> Iterator[Client]:
    with Client(server.address) as c:
        yield c


def test_enqueue_options_reach_the_server(client: Client) -> None:
    run_at = datetime.now(UTC) + timedelta(minutes=5)
    task_id = client.enqueue(
        "report", {"month": 11}, queue="reports", priority=7, run_at=run_at, max_attempts=9, timeout=120
    )
    info = client.get(task_id)
    assert (info.queue, info.type, info.payload, info.status, info.max_attempts) == (
        "reports", "report", {"month": 11}, "scheduled", 9,
    )  # fmt: skip


def test_idempotent_enqueue_and_duplicate_task(client: Client) -> None:
    first = client.enqueue("charge", {"amount": 5}, idempotency_key="order-1")
    assert client.enqueue("charge", {"amount": 5}, idempotency_key="order-1") == first
    with pytest.raises(DuplicateTask, match="different payload"):
        client.enqueue("charge", {"amount": 6}, idempotency_key="order-1")


def test_enqueue_many_reports_each_item(client: Client) -> None:
    client.enqueue("a", 1, idempotency_key="k")
    results = client.enqueue_many([TaskSpec("a", 2), TaskSpec("a", 3, idempotency_key="k")])
    assert results[0].created and results[0].error is None
    assert isinstance(results[1].error, DuplicateTask)


def test_typed_errors(client: Client, server: InProcessServer) -> None:
    with pytest.raises(TaskNotFound):
        client.get(UNKNOWN)
    with pytest.raises(InvalidRequest, match="task_id 'nope' is not a valid UUID"):
        client.get("nope")
    with pytest.raises(InvalidRequest, match=r"tasks\[0\]\.queue is empty"):
        client.enqueue("t", queue="")
    task_id = client.enqueue("t")
    [t] = lease(server.tasks)
    complete(server.tasks, t)
    with pytest.raises(FailedPrecondition, match="already succeeded"):
        client.cancel(task_id)


def test_wait_gives_up_at_its_deadline(client: Client) -> None:
    task_id = client.enqueue("never_run")
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="still queued"):
        client.wait(task_id, timeout=0.5)
    assert time.monotonic() - started < 3


def test_unreachable_server_is_unavailable_after_retries_within_the_timeout() -> None:
    started = time.monotonic()
    with Client("127.0.0.1:1", timeout=1.5) as client, pytest.raises(Unavailable):
        client.get(UNKNOWN)
    assert 0.5 < time.monotonic() - started < 5  # it retried, and stopped at the deadline


def test_async_client(server: InProcessServer) -> None:
    import asyncio

    async def scenario() -> str:
        async with AsyncClient(server.address) as client:
            task_id = await client.enqueue("t", {"x": 1})
            return (await client.get(task_id)).status

    assert asyncio.run(scenario()) == "queued"


def test_address_and_timeout_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, server: InProcessServer
) -> None:
    monkeypatch.setenv("TASKQUEUE_ADDRESS", server.address)
    monkeypatch.setenv("TASKQUEUE_TIMEOUT", "3")
    with Client() as client:
        assert client._async.settings.address == server.address
        assert client._async.settings.timeout == timedelta(seconds=3)
        assert client.get(client.enqueue("t")).status == "queued"


def test_concurrent_enqueues_share_rpcs_yet_each_call_gets_its_own_answer(server: InProcessServer) -> None:
    import asyncio

    async def scenario() -> tuple[list[Any], list[Any]]:
        async with AsyncClient(server.address) as client:
            good = [client.enqueue("t", {"n": n}) for n in range(200)]
            bad = [client.enqueue("t", {"n": -1}, queue="no spaces allowed")]
            outcomes = await asyncio.gather(*good, *bad, return_exceptions=True)
            infos = [await client.get(i) for i in outcomes[:200]]
            return list(outcomes), [i.payload for i in infos]

    outcomes, payloads = asyncio.run(scenario())
    assert payloads == [{"n": n} for n in range(200)]
    assert isinstance(outcomes[200], InvalidRequest)
    assert "tasks[0].queue 'no spaces allowed' contains whitespace" in str(outcomes[200])
