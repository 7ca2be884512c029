"""Use case: lease tasks (long-polling when none is ready) and extend leases."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from datetime import timedelta

from taskqueue.clock import Clock
from taskqueue.domain import FinishOutcome, HeartbeatOutcome, LeasedTask, LeaseOrder, LeaseRef
from taskqueue.storage.database import Database
from taskqueue.storage.tasks_lease import heartbeat, lease_available, release
from taskqueue.wakeups import ReadyWakeups


class Leasing:
    def __init__(self, db: Database, clock: Clock, wakeups: ReadyWakeups, backup_poll: timedelta) -> None:
        self._db = db
        self._clock = clock
        self._wakeups = wakeups
        self._backup_poll = backup_poll.total_seconds()
        self._closing = False

    async def lease(self, order: LeaseOrder) -> list[LeasedTask]:
        """Lease ready tasks now, or wait up to order.wait for some to become ready.

        The waiter subscribes before it looks at the table, so a task enqueued between the look
        and the wait still wakes it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + order.wait.total_seconds()
        with self._wakeups.subscribe(order.queues) as woken:
            while True:
                woken.clear()
                tasks = await self._lease_now(order)
                remaining = deadline - loop.time()
                if tasks or remaining <= 0 or self._closing:
                    return tasks
                # Jitter keeps idle pollers of many server processes from querying in step.
                backup = self._backup_poll * random.uniform(0.5, 1.0)
                try:
                    async with asyncio.timeout(min(remaining, backup)):
                        await woken.wait()
                except TimeoutError:
                    pass

    async def _lease_now(self, order: LeaseOrder) -> list[LeasedTask]:
        """Lease, and if the caller goes away meanwhile (cancelled call), hand the leases back at
        once rather than leave the tasks stranded until their leases expire."""
        leasing = asyncio.ensure_future(lease_available(self._db, order, self._clock.now()))
        try:
            return await asyncio.shield(leasing)
        except asyncio.CancelledError:
            tasks = await leasing
            if tasks:
                refs = [LeaseRef(t.task_id, t.lease_id) for t in tasks]
                await release(self._db, refs, self._clock.now())
            raise

    async def release(self, refs: Sequence[LeaseRef]) -> list[FinishOutcome]:
        return await release(self._db, refs, self._clock.now())

    async def heartbeat(self, refs: Sequence[LeaseRef], lease_duration: timedelta) -> list[HeartbeatOutcome]:
        return await heartbeat(self._db, refs, lease_duration, self._clock.now())

    def close(self) -> None:
        """Shutdown: waiting Lease calls return what they have (nothing) at once."""
        self._closing = True
        self._wakeups.wake_all()
