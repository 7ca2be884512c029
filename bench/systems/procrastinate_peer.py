"""Procrastinate, driven through its public API: a psycopg connector, `batch_defer_async` for
batches (one INSERT), `defer_async` for single tasks, `run_worker_async` with a no-op task."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import procrastinate

from bench.measure import RemainingProbe, Shared, count_handled, wait_go, watch_stop

QUEUE = "bench"
TASK = "noop"


def _app(dsn: str, pool_size: int, shared: Shared | None = None) -> tuple[procrastinate.App, Any]:
    logging.getLogger("procrastinate").setLevel(logging.WARNING)  # it logs two INFO lines per job
    app = procrastinate.App(
        connector=procrastinate.PsycopgConnector(conninfo=dsn, min_size=pool_size, max_size=pool_size)
    )

    async def noop(seq: int | None = None) -> None:
        if shared is not None:
            if seq is not None:
                shared.results.put(("started", seq, time.monotonic()))
            count_handled(shared)

    return app, app.task(name=TASK, queue=QUEUE)(noop)


# The tasks not finished yet; polled to see when a run ends.
UNFINISHED = "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')"


class System:
    name = "Procrastinate"
    key = "procrastinate"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        asyncio.run(self._install())
        self.remaining = RemainingProbe(dsn, UNFINISHED)
        self.config = {"dsn": dsn}

    async def _install(self) -> None:
        app, _ = _app(self.dsn, 1)
        async with app.open_async():
            await app.schema_manager.apply_schema_async()

    def close(self) -> None:
        self.remaining.close()

    @staticmethod
    async def produce(config: dict[str, Any], shared: Shared, count: int, batch: int, inflight: int) -> None:
        app, task = _app(config["dsn"], max(1, inflight))
        async with app.open_async():
            await task.batch_defer_async()  # warm the connection before the clock starts
            await wait_go(shared)
            per_lane = [count // inflight + (1 if i < count % inflight else 0) for i in range(inflight)]

            async def lane(n: int) -> None:
                for first in range(0, n, batch):
                    k = min(batch, n - first)
                    if k == 1:
                        await task.defer_async()
                    else:
                        await task.batch_defer_async(*([{}] * k))

            await asyncio.gather(*(lane(n) for n in per_lane))
            shared.results.put(("produced", time.monotonic()))

    @staticmethod
    async def produce_paced(config: dict[str, Any], shared: Shared, count: int, rate: float) -> None:
        app, task = _app(config["dsn"], 1)
        async with app.open_async():
            await task.batch_defer_async()
            await wait_go(shared)
            start = time.monotonic()
            for seq in range(count):
                await asyncio.sleep(max(0.0, start + seq / rate - time.monotonic()))
                await task.defer_async(seq=seq)
                shared.results.put(("sent", seq, time.monotonic()))

    @staticmethod
    async def work(config: dict[str, Any], shared: Shared, concurrency: int) -> None:
        workers = min(concurrency, 10)
        app, _ = _app(config["dsn"], max(4, workers), shared)
        async with app.open_async():
            worker = asyncio.create_task(
                app.run_worker_async(queues=[QUEUE], concurrency=workers, install_signal_handlers=False)
            )
            shared.ready.release()
            stopping = asyncio.Event()
            watcher = asyncio.create_task(watch_stop(shared, stopping.set))
            await stopping.wait()
            worker.cancel()  # its documented graceful stop: running jobs finish first
            await asyncio.wait([worker])
            watcher.cancel()
