"""Time source for the services.

The database's clock is the one authority on time: every server process sharing a database must
agree on when a lease expires, so the production clock answers `None` ("use now() in SQL"). Tests
pass a clock that answers a time of their choosing, to expire leases without sleeping.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime | None:
        """The current time, or None to let the database use its own now()."""


class DatabaseClock:
    """Production clock: defers to the database's now()."""

    def now(self) -> datetime | None:
        return None
