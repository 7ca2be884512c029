"""The ceiling: the server's own storage functions (the same SQL statements) called directly from
Python processes over psycopg, with no gRPC in between."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

from bench.measure import RemainingProbe, Shared, count_handled, wait_go, watch_stop
from bench.systems.taskqueue_grpc import QUEUE, seed_finished_tasks
from taskqueue.domain import Completion, LeaseOrder, NewTask
from taskqueue.storage.database import Database
from taskqueue.storage.schema_migrations import upgrade_to_head
from taskqueue.storage.tasks_enqueue import enqueue_tasks
from taskqueue.storage.tasks_finish import complete_if_leased
from taskqueue.storage.tasks_lease import lease_available


def _task() -> NewTask:
    return NewTask(QUEUE, "noop", "null", 0, None, timedelta(0), 5, timedelta(minutes=5), None,
                   timedelta(seconds=1), timedelta(hours=1))  # fmt: skip


async def _open(dsn: str, size: int) -> Database:
    db = Database(dsn, pool_size=size, pool_timeout=timedelta(seconds=30))
    await db.open(timedelta(seconds=30))
    return db


# The tasks not finished yet; polled to see when a run ends.
UNFINISHED = "SELECT count(*) FROM tasks WHERE status IN ('queued', 'leased')"


class System:
    name = "raw SQL (same statements, no gRPC)"
    key = "raw_sql"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        upgrade_to_head(dsn)
        self.remaining = RemainingProbe(dsn, UNFINISHED)
        self.config = {"dsn": dsn}

    def seed_history(self, n: int) -> None:
        seed_finished_tasks(self.dsn, n)

    def close(self) -> None:
        self.remaining.close()

    @staticmethod
    async def produce(config: dict[str, Any], shared: Shared, count: int, batch: int, inflight: int) -> None:
        db = await _open(config["dsn"], inflight)
        await wait_go(shared)

        async def lane(n: int) -> None:
            for first in range(0, n, batch):
                await enqueue_tasks(db, [_task() for _ in range(min(batch, n - first))], None)

        per_lane = [count // inflight + (1 if i < count % inflight else 0) for i in range(inflight)]
        await asyncio.gather(*(lane(n) for n in per_lane))
        shared.results.put(("produced", time.monotonic()))
        await db.close()

    @staticmethod
    async def work(config: dict[str, Any], shared: Shared, concurrency: int) -> None:
        db = await _open(config["dsn"], 2)
        order = LeaseOrder("raw", (QUEUE,), (), timedelta(minutes=5), concurrency, timedelta(0))
        stopping = asyncio.Event()
        shared.ready.release()
        watcher = asyncio.create_task(watch_stop(shared, stopping.set))
        while not stopping.is_set():
            leased = await lease_available(db, order, None)
            if not leased:
                await asyncio.sleep(0.005)  # no LISTEN here: the ceiling measures SQL, not wake-ups
                continue
            count_handled(shared, len(leased))
            await complete_if_leased(db, [Completion(t.task_id, t.lease_id, None) for t in leased], None)
        watcher.cancel()
        await db.close()
