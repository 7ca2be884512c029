"""taskqueue end to end: a real server process; producers and workers use the SDK over gRPC."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from bench.measure import RemainingProbe, Shared, count_handled, wait_go, watch_stop
from taskqueue.storage.schema_migrations import upgrade_to_head
from taskqueue_sdk import AsyncClient, TaskContext, TaskSpec, Worker

QUEUE = "bench"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# The tasks not finished yet; polled to see when a run ends.
UNFINISHED = "SELECT count(*) FROM tasks WHERE status IN ('queued', 'leased')"


class System:
    name = "taskqueue (gRPC)"
    key = "taskqueue"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        upgrade_to_head(dsn)
        port = _free_port()
        self.address = f"127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKQUEUE_")}
        self._server = subprocess.Popen(
            [sys.executable, "-m", "taskqueue", "serve", "--database-url", dsn, "--listen", self.address,
             "--log-level", "WARNING"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self._wait_serving()
        self.remaining = RemainingProbe(dsn, UNFINISHED)
        self.config = {"address": self.address, "dsn": dsn}

    def _wait_serving(self) -> None:
        health = Path(sys.executable).parent / "taskqueue"
        for _ in range(300):
            done = subprocess.run([str(health), "health", "--address", self.address], capture_output=True)
            if done.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("the taskqueue server did not start")

    def seed_history(self, n: int) -> None:
        seed_finished_tasks(self.dsn, n)

    def close(self) -> None:
        self.remaining.close()
        self._server.terminate()
        self._server.wait(30)

    # -- child processes -----------------------------------------------------------------------

    @staticmethod
    async def produce(config: dict[str, Any], shared: Shared, count: int, batch: int, inflight: int) -> None:
        async with AsyncClient(config["address"], timeout=60) as client:
            await wait_go(shared)
            if batch > 1:
                for first in range(0, count, batch):
                    size = min(batch, count - first)
                    await client.enqueue_many([TaskSpec("noop", None, queue=QUEUE) for _ in range(size)])
            else:
                per_lane = [count // inflight + (1 if i < count % inflight else 0) for i in range(inflight)]

                async def lane(n: int) -> None:
                    for _ in range(n):
                        await client.enqueue("noop", None, queue=QUEUE)

                await asyncio.gather(*(lane(n) for n in per_lane))
            shared.results.put(("produced", time.monotonic()))

    @staticmethod
    async def produce_paced(config: dict[str, Any], shared: Shared, count: int, rate: float) -> None:
        async with AsyncClient(config["address"], timeout=60) as client:
            await wait_go(shared)
            start = time.monotonic()
            for seq in range(count):
                await asyncio.sleep(max(0.0, start + seq / rate - time.monotonic()))
                await client.enqueue("noop", {"seq": seq}, queue=QUEUE)
                shared.results.put(("sent", seq, time.monotonic()))

    @staticmethod
    async def work(config: dict[str, Any], shared: Shared, concurrency: int) -> None:
        worker = Worker(address=config["address"], queues=[QUEUE], concurrency=concurrency, poll_wait=5)

        @worker.task("noop")
        async def noop(payload: Any, ctx: TaskContext) -> None:
            if payload is not None:
                shared.results.put(("started", payload["seq"], time.monotonic()))
            count_handled(shared)

        shared.ready.release()
        watcher = asyncio.create_task(watch_stop(shared, worker.stop))
        await worker.run()
        watcher.cancel()

    @staticmethod
    async def read_status(
        config: dict[str, Any], shared: Shared, ids: list[str], seconds: float, inflight: int
    ) -> None:
        async with AsyncClient(config["address"], timeout=60) as client:
            await wait_go(shared)
            deadline = time.monotonic() + seconds
            done = 0

            async def lane() -> None:
                nonlocal done
                while time.monotonic() < deadline:
                    await client.get(random.choice(ids))
                    done += 1

            await asyncio.gather(*(lane() for _ in range(inflight)))
            shared.results.put(("reads", done))

    def sample_ids(self, n: int) -> list[str]:
        async def enqueue() -> list[str]:
            async with AsyncClient(self.address, timeout=60) as client:
                results = await client.enqueue_many([TaskSpec("noop", None, queue="reads") for _ in range(n)])
                return [r.task_id for r in results]

        return asyncio.run(enqueue())


def seed_finished_tasks(dsn: str, n: int) -> None:
    """n succeeded tasks, as months of history would leave them (with one attempt each)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            """
            INSERT INTO tasks (queue, type, payload, status, attempts, max_attempts, timeout,
                               backoff_base, backoff_cap, lease_id, lease_owner, run_at, created_at,
                               started_at, finished_at)
            SELECT 'bench', 'noop', 'null', 'succeeded', 1, 5, '5 min', '1 s', '1 h', gen_random_uuid(),
                   'history', now() - make_interval(secs => i), now() - make_interval(secs => i),
                   now() - make_interval(secs => i), now() - make_interval(secs => i)
            FROM generate_series(1, %(n)s) AS i
            """,
            {"n": n},
        )
        conn.execute("VACUUM ANALYZE tasks")
