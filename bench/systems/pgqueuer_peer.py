"""PGQueuer, driven through its public API the way its own benchmark tool does: asyncpg
connections, batch enqueue (one INSERT per batch), QueueManager workers with a no-op entrypoint.

Layout note: PGQueuer was fastest here with one QueueManager per worker process (more managers
per process each poll on their own connection and slowed it down on 2 cores), so `concurrency`
is not used; each manager dequeues its default batch of 10 jobs.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import asyncpg
from pgqueuer import AsyncpgDriver, Job, Queries, QueueManager

from bench.measure import RemainingProbe, Shared, count_handled, wait_go, watch_stop

ENTRYPOINT = "noop"


# The tasks not finished yet (done jobs are deleted); polled to see when a run ends.
UNFINISHED = "SELECT count(*) FROM pgqueuer"


class System:
    name = "PGQueuer"
    key = "pgqueuer"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        asyncio.run(self._install())
        self.remaining = RemainingProbe(dsn, UNFINISHED)
        self.config = {"dsn": dsn}

    async def _install(self) -> None:
        conn = await asyncpg.connect(self.dsn)
        try:
            await Queries(AsyncpgDriver(conn)).install()
        finally:
            await conn.close()

    def close(self) -> None:
        self.remaining.close()

    @staticmethod
    async def produce(config: dict[str, Any], shared: Shared, count: int, batch: int, inflight: int) -> None:
        pool = await asyncpg.create_pool(config["dsn"], min_size=inflight, max_size=inflight)
        per_lane = [count // inflight + (1 if i < count % inflight else 0) for i in range(inflight)]

        async def lane(n: int) -> None:
            async with pool.acquire() as conn:
                queries = Queries(AsyncpgDriver(conn))
                await queries.enqueue([], [], [])  # prepare the statement before the clock starts
                await started.wait()
                for first in range(0, n, batch):
                    k = min(batch, n - first)
                    await queries.enqueue([ENTRYPOINT] * k, [None] * k, [0] * k)

        started = asyncio.Event()
        lanes = [asyncio.create_task(lane(n)) for n in per_lane]
        await asyncio.sleep(0.2)
        await wait_go(shared)
        started.set()
        await asyncio.gather(*lanes)
        shared.results.put(("produced", time.monotonic()))
        await pool.close()

    @staticmethod
    async def produce_paced(config: dict[str, Any], shared: Shared, count: int, rate: float) -> None:
        conn = await asyncpg.connect(config["dsn"])
        queries = Queries(AsyncpgDriver(conn))
        await queries.enqueue([], [], [])
        await wait_go(shared)
        start = time.monotonic()
        for seq in range(count):
            await asyncio.sleep(max(0.0, start + seq / rate - time.monotonic()))
            await queries.enqueue([ENTRYPOINT], [str(seq).encode()], [0])
            shared.results.put(("sent", seq, time.monotonic()))
        await conn.close()

    @staticmethod
    async def work(config: dict[str, Any], shared: Shared, concurrency: int) -> None:
        conn = await asyncpg.connect(config["dsn"])
        manager = QueueManager(Queries(AsyncpgDriver(conn)))

        @manager.entrypoint(ENTRYPOINT)
        async def noop(job: Job) -> None:
            if job.payload is not None:
                shared.results.put(("started", int(job.payload), time.monotonic()))
            count_handled(shared)

        shared.ready.release()
        watcher = asyncio.create_task(watch_stop(shared, manager.shutdown.set))
        await manager.run()
        watcher.cancel()
        await conn.close()
