"""Run a handler as the worker would, without a server: for unit tests of your own handlers.

outcome = run_task(send_email, {"to": "ada@example.com"})
assert outcome.succeeded and outcome.result == {"sent": True}
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from taskqueue_sdk.context import TaskContext
from taskqueue_sdk.handlers import register, run_handler


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    """What the worker would have reported."""

    succeeded: bool
    result: Any
    error: str
    permanent: bool  # the task would go dead at once instead of being retried


def run_task(
    handler: Callable[..., Any],
    payload: Any = None,
    *,
    attempt: int = 1,
    max_attempts: int = 5,
    timeout: float | None = None,
    model: Callable[[Any], Any] | None = None,
    non_retryable: tuple[type[BaseException], ...] = (),
) -> TaskOutcome:
    """Run `handler` once on `payload` (round-tripped through JSON, as on the wire)."""
    ctx = TaskContext(
        str(uuid.uuid4()),
        getattr(handler, "__name__", "handler"),
        "test",
        attempt,
        max_attempts,
        datetime.now(UTC) + timedelta(minutes=5),
    )
    registration = register(handler, model)

    async def once() -> TaskOutcome:
        outcome = await run_handler(
            registration, json.dumps(payload).encode(), ctx, timeout, None, non_retryable
        )
        result = json.loads(outcome.result_json) if outcome.result_json else None
        return TaskOutcome(outcome.succeeded, result, outcome.error, outcome.permanent)

    return asyncio.run(once())
