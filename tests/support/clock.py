"""A clock for tests: real time plus an offset the test moves forward."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class ShiftedClock:
    def __init__(self) -> None:
        self.offset = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, delta: timedelta) -> None:
        self.offset += delta
