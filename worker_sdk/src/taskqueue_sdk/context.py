"""What a handler knows about the task it runs, and how it hears that it should stop."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime


@dataclass
class TaskContext:
    """Passed to handlers that take a second argument.

    `cancelled` is set when the task was cancelled, its lease was lost or its timeout passed: an
    async handler is cancelled outright, a sync handler should check `ctx.cancelled.is_set()`
    (or `ctx.should_stop`) in its loops and return early.
    """

    task_id: str
    type: str
    queue: str
    attempt: int
    max_attempts: int
    lease_expires_at: datetime
    cancelled: threading.Event = field(default_factory=threading.Event)
    stop_reason: str = ""
    _extend: Callable[[], Awaitable[None]] | None = field(default=None, repr=False)

    @property
    def should_stop(self) -> bool:
        return self.cancelled.is_set()

    @property
    def is_last_attempt(self) -> bool:
        return self.attempt >= self.max_attempts

    async def heartbeat(self) -> None:
        """Extend the lease now (the worker also does it on its own, in the background)."""
        if self._extend is not None:
            await self._extend()

    def _stop(self, reason: str) -> None:
        if not self.cancelled.is_set():
            self.stop_reason = reason
            self.cancelled.set()
