"""Many workers on separate connections lease every task exactly once (FOR UPDATE SKIP LOCKED)."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta

from taskqueue.domain import LeaseOrder, NewTask
from taskqueue.storage.database import Database
from taskqueue.storage.tasks_enqueue import enqueue_tasks
from taskqueue.storage.tasks_lease import lease_available


def _task(i: int) -> NewTask:
    return NewTask(
        queue="bulk",
        type="job",
        payload_json=str(i),
        priority=i % 3,
        run_at=None,
        delay=timedelta(0),
        max_attempts=3,
        timeout=timedelta(minutes=1),
        idempotency_key=None,
        backoff_base=timedelta(seconds=1),
        backoff_cap=timedelta(seconds=10),
    )


async def _lease_all(url: str, workers: int, total: int) -> Counter[object]:
    producer = Database(url, pool_size=1, pool_timeout=timedelta(seconds=10))
    await producer.open(timedelta(seconds=10))
    for start in range(0, total, 500):
        await enqueue_tasks(producer, [_task(i) for i in range(start, start + 500)], None)
    await producer.close()

    leased: Counter[object] = Counter()
    start = asyncio.Event()

    async def worker(n: int) -> None:
        # One pool of one connection per worker: 20 separate database sessions.
        db = Database(url, pool_size=1, pool_timeout=timedelta(seconds=10))
        await db.open(timedelta(seconds=10))
        order = LeaseOrder(f"w{n}", ("bulk",), (), timedelta(minutes=5), 7, timedelta(0))
        await start.wait()
        try:
            while tasks := await lease_available(db, order, None):
                leased.update(t.task_id for t in tasks)
        finally:
            await db.close()

    runners = [asyncio.create_task(worker(n)) for n in range(workers)]
    await asyncio.sleep(0.2)
    start.set()
    await asyncio.gather(*runners)
    return leased


def test_twenty_workers_lease_two_thousand_tasks_exactly_once(fresh_db: str) -> None:
    leased = asyncio.run(_lease_all(fresh_db, workers=20, total=2000))
    assert len(leased) == 2000
    assert set(leased.values()) == {1}
