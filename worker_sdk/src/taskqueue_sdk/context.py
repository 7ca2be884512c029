"""What a handler knows about the task it runs, and how it hears that it should stop."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any


class TaskContext:
    """Passed to handlers that take a second argument.

    `cancelled` is set when the task was cancelled, its lease was lost or its timeout passed: an
    async handler is cancelled outright, a sync handler should check `ctx.should_stop` (or
    `ctx.cancelled.is_set()`) in its loops and return early.

    Built once per task on the worker's hot path, so the costlier parts (the threading.Event, the
    datetime) are made only when a handler asks for them.
    """

    __slots__ = ("_event", "_expires", "_extend", "_stopped", "attempt", "lease_id", "max_attempts",
                 "queue", "stop_reason", "task_id", "type")  # fmt: skip

    def __init__(
        self,
        task_id: str,
        type: str,
        queue: str,
        attempt: int,
        max_attempts: int,
        lease_expires_at: Any,  # a datetime, or a protobuf Timestamp converted on first use
        extend: Callable[[], Awaitable[None]] | None = None,
        lease_id: str = "",
    ) -> None:
        self.task_id = task_id
        self.lease_id = lease_id  # this attempt's fencing token: handy to make side effects idempotent
        self.type = type
        self.queue = queue
        self.attempt = attempt
        self.max_attempts = max_attempts
        self.stop_reason = ""
        self._expires = lease_expires_at
        self._extend = extend
        self._stopped = False
        self._event: threading.Event | None = None

    def __repr__(self) -> str:
        return f"TaskContext(task_id={self.task_id!r}, type={self.type!r}, attempt={self.attempt})"

    @property
    def lease_expires_at(self) -> datetime:
        if not isinstance(self._expires, datetime):
            self._expires = self._expires.ToDatetime(UTC)
        return self._expires

    @property
    def cancelled(self) -> threading.Event:
        if self._event is None:
            event = threading.Event()
            self._event = event
            if self._stopped:  # _stop() may have run while the event was being made
                event.set()
        return self._event

    @property
    def should_stop(self) -> bool:
        return self._stopped

    @property
    def is_last_attempt(self) -> bool:
        return self.attempt >= self.max_attempts

    async def heartbeat(self) -> None:
        """Extend the lease now (the worker also does it on its own, in the background)."""
        if self._extend is not None:
            await self._extend()

    def _stop(self, reason: str) -> None:
        if not self._stopped:
            self.stop_reason = reason
            self._stopped = True
            if self._event is not None:
                self._event.set()
