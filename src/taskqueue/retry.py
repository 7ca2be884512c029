"""Retry policy: exponential backoff with full jitter, and the retry-or-dead decision."""

from __future__ import annotations

import random
from datetime import timedelta

from taskqueue.domain import Failure, FailureDecision, FailureFacts, TaskStatus


def full_jitter_delay(
    attempt: int, base: timedelta, cap: timedelta, rand: random.Random | None = None
) -> timedelta:
    """delay = uniform(0, min(cap, base * 2^(attempt-1))), as in AWS's "full jitter".

    Full jitter spreads retries of tasks that failed together, so they do not stampede back at once.
    """
    if attempt < 1:
        raise ValueError(f"attempt is {attempt}; it starts at 1")
    # Cap the exponent first: 2**attempt overflows timedelta long before attempts run out.
    exponent = min(attempt - 1, 62)
    ceiling = min(cap.total_seconds(), base.total_seconds() * (2.0**exponent))
    return timedelta(seconds=(rand or random).uniform(0.0, ceiling))


def decide_after_failure(failure: Failure, facts: FailureFacts) -> FailureDecision:
    """What becomes of a task whose current attempt (number `facts.attempts`) just failed."""
    if facts.cancel_requested:
        return FailureDecision(TaskStatus.CANCELLED, timedelta(0))
    if failure.permanent or facts.attempts >= facts.max_attempts:
        return FailureDecision(TaskStatus.DEAD, timedelta(0))
    if failure.retry_after is not None:
        return FailureDecision(TaskStatus.QUEUED, failure.retry_after)
    delay = full_jitter_delay(facts.attempts, facts.backoff_base, facts.backoff_cap)
    return FailureDecision(TaskStatus.QUEUED, delay)
