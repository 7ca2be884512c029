"""Use case: the in-process reaper returns expired leases to the queue, every few seconds."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from taskqueue.clock import Clock
from taskqueue.errors import Unavailable
from taskqueue.storage.database import Database
from taskqueue.storage.tasks_reap import reap_expired

log = logging.getLogger(__name__)


class Reaper:
    def __init__(self, db: Database, clock: Clock, interval: timedelta, batch: int) -> None:
        self._db = db
        self._clock = clock
        self._interval = interval.total_seconds()
        self._batch = batch

    async def run_once(self) -> dict[str, int]:
        """Reap every lease expired by now, a batch per statement; returns counts by new status."""
        total: dict[str, int] = {}
        while True:
            counts = await reap_expired(self._db, self._batch, self._clock.now())
            for status, n in counts.items():
                total[status] = total.get(status, 0) + n
            if sum(counts.values()) < self._batch:
                break
        if total:
            log.info("reaped expired leases", extra={"reaped": total})
        return total

    async def run_forever(self) -> None:
        while True:
            try:
                await self.run_once()
            except Unavailable as e:
                log.warning("reaper skipped a round: %s", e)
            await asyncio.sleep(self._interval)
