"""Backoff stays within the full-jitter bounds; the retry-or-dead decision follows the rules."""

from __future__ import annotations

import random
from datetime import timedelta
from uuid import uuid4

from hypothesis import given
from hypothesis import strategies as st

from taskqueue.domain import Failure, FailureFacts, TaskStatus
from taskqueue.retry import decide_after_failure, full_jitter_delay

millis = st.integers(min_value=1, max_value=10**8).map(lambda ms: timedelta(milliseconds=ms))


@given(attempt=st.integers(min_value=1, max_value=10_000), base=millis, cap=millis, seed=st.integers())
def test_full_jitter_delay_is_within_bounds(attempt: int, base: timedelta, cap: timedelta, seed: int) -> None:
    delay = full_jitter_delay(attempt, base, cap, random.Random(seed))
    ceiling = min(cap.total_seconds(), base.total_seconds() * 2.0 ** min(attempt - 1, 62))
    assert timedelta(0) <= delay
    assert delay.total_seconds() <= ceiling + 1e-6


def test_full_jitter_delay_spreads_over_the_whole_range() -> None:
    rand = random.Random(7)
    delays = [full_jitter_delay(4, timedelta(seconds=1), timedelta(hours=1), rand) for _ in range(2000)]
    # uniform(0, 8 s): both ends of the range are reached, not just the middle.
    assert min(delays) < timedelta(seconds=0.1)
    assert max(delays) > timedelta(seconds=7.9)


def _failure(permanent: bool = False, retry_after: timedelta | None = None) -> Failure:
    return Failure(uuid4(), uuid4(), "boom", permanent, retry_after)


def _facts(attempts: int, max_attempts: int = 3, cancel_requested: bool = False) -> FailureFacts:
    return FailureFacts(attempts, max_attempts, timedelta(seconds=1), timedelta(seconds=60), cancel_requested)


def test_retries_while_attempts_remain() -> None:
    decision = decide_after_failure(_failure(), _facts(attempts=2))
    assert decision.status is TaskStatus.QUEUED
    assert timedelta(0) <= decision.delay <= timedelta(seconds=2)


def test_dead_when_out_of_attempts_or_permanent() -> None:
    assert decide_after_failure(_failure(), _facts(attempts=3)).status is TaskStatus.DEAD
    assert decide_after_failure(_failure(permanent=True), _facts(attempts=1)).status is TaskStatus.DEAD


def test_cancel_request_wins_over_retry() -> None:
    decision = decide_after_failure(_failure(), _facts(attempts=1, cancel_requested=True))
    assert decision.status is TaskStatus.CANCELLED


def test_retry_after_replaces_backoff() -> None:
    decision = decide_after_failure(_failure(retry_after=timedelta(seconds=42)), _facts(attempts=1))
    assert (decision.status, decision.delay) == (TaskStatus.QUEUED, timedelta(seconds=42))
