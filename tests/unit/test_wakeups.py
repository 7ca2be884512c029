"""The in-process wake-up hub: immediate wake-ups, scheduled ones, and queue isolation."""

from __future__ import annotations

import asyncio
import time

from taskqueue.wakeups import ReadyWakeups


async def _woken_within(event: asyncio.Event, seconds: float) -> bool:
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
        return True
    except TimeoutError:
        return False


def test_ready_task_wakes_only_waiters_of_its_queue() -> None:
    async def scenario() -> tuple[bool, bool]:
        hub = ReadyWakeups()
        with hub.subscribe(["a"]) as a, hub.subscribe(["b"]) as b:
            hub.task_ready("a", time.time())
            return await _woken_within(a, 0.1), await _woken_within(b, 0.1)

    assert asyncio.run(scenario()) == (True, False)


def test_future_task_wakes_waiters_when_due() -> None:
    async def scenario() -> tuple[bool, float]:
        hub = ReadyWakeups()
        with hub.subscribe(["a"]) as a:
            start = time.monotonic()
            hub.task_ready("a", time.time() + 0.3)
            hub.task_ready("a", time.time() + 5)  # a later one must not delay the earlier one
            woken = await _woken_within(a, 2)
            return woken, time.monotonic() - start

    woken, elapsed = asyncio.run(scenario())
    assert woken and 0.25 <= elapsed < 1.0


def test_unsubscribed_waiters_are_forgotten_and_wake_all_reaches_everyone() -> None:
    async def scenario() -> tuple[bool, int]:
        hub = ReadyWakeups()
        with hub.subscribe(["a", "b"]):
            pass
        with hub.subscribe(["c"]) as c:
            hub.wake_all()
            return await _woken_within(c, 0.1), len(hub._waiters)

    assert asyncio.run(scenario()) == (True, 1)
