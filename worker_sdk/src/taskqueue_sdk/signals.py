"""Scoped signal handling for the worker: installed while it runs, removed afterwards."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def on_stop_signals(first: Callable[[], None], again: Callable[[], None]) -> Iterator[None]:
    """SIGTERM/SIGINT call `first` the first time and `again` on every later one."""
    loop = asyncio.get_running_loop()
    received = 0

    def handle() -> None:
        nonlocal received
        received += 1
        (first if received == 1 else again)()

    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        loop.add_signal_handler(sig, handle)
    try:
        yield
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
