"""Use case: workers report outcomes (Complete, Fail), applied only under a live lease."""

from __future__ import annotations

from collections.abc import Sequence

from taskqueue.clock import Clock
from taskqueue.domain import Completion, Failure, FinishOutcome
from taskqueue.retry import decide_after_failure
from taskqueue.storage.database import Database
from taskqueue.storage.tasks_finish import complete_if_leased, fail_if_leased


class Reporting:
    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def complete(self, completions: Sequence[Completion]) -> list[FinishOutcome]:
        return await complete_if_leased(self._db, completions, self._clock.now())

    async def fail(self, failures: Sequence[Failure]) -> list[FinishOutcome]:
        """Retry with full-jitter backoff, or dead when out of attempts or permanent."""
        return await fail_if_leased(self._db, failures, decide_after_failure, self._clock.now())
