"""Timing helpers shared by every system: child processes, a shared progress counter, statistics."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import statistics
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, LiteralString

import psycopg

CTX = mp.get_context("spawn")  # no fork: gRPC and asyncio state must not be copied into children


@dataclass
class Shared:
    """State the orchestrator shares with producer and worker processes."""

    go: Any  # mp.Event: producers start when it is set (after every process has connected)
    stop: Any  # mp.Event: workers stop when it is set
    handled: Any  # mp.Value('q'): handler invocations, all processes together
    ready: Any  # mp.Barrier-like: a Semaphore each child releases once connected
    results: Any  # mp.Queue: (kind, payload) records sent back by children

    @classmethod
    def make(cls) -> Shared:
        return cls(CTX.Event(), CTX.Event(), CTX.Value("q", 0), CTX.Semaphore(0), CTX.Queue())


def _run_async(target: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
    asyncio.run(target(*args))


def start(target: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> Any:
    process = CTX.Process(target=_run_async, args=(target, *args), daemon=True)
    process.start()
    return process


def wait_ready(shared: Shared, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    for _ in range(count):
        if not shared.ready.acquire(timeout=max(0.1, deadline - time.monotonic())):
            raise TimeoutError("a benchmark process did not get ready in time")


def join_all(processes: Sequence[Any], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    for p in processes:
        p.join(max(0.1, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            raise TimeoutError("a benchmark process did not finish in time")
        if p.exitcode != 0:
            raise RuntimeError(f"a benchmark process failed (exit code {p.exitcode})")


async def wait_go(shared: Shared) -> None:
    """In a producer: say it is connected, then wait for the start signal."""
    shared.ready.release()
    while not shared.go.is_set():
        await asyncio.sleep(0.001)


async def watch_stop(shared: Shared, on_stop: Callable[[], None]) -> None:
    """In a child: call on_stop once the orchestrator sets shared.stop."""
    while not shared.stop.is_set():
        await asyncio.sleep(0.02)
    on_stop()


def count_handled(shared: Shared, n: int = 1) -> None:
    with shared.handled.get_lock():
        shared.handled.value += n


class RemainingProbe:
    """Counts unfinished tasks with one long-lived connection: a new connection per poll would
    fork a PostgreSQL backend each time and steal CPU from the system under test."""

    def __init__(self, dsn: str, query: LiteralString) -> None:
        self._conn = psycopg.connect(dsn, autocommit=True)
        self._query = query

    def __call__(self) -> int:
        row = self._conn.execute(self._query).fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        self._conn.close()


@dataclass(frozen=True)
class Figure:
    median: float
    low: float
    high: float
    runs: tuple[float, ...]

    @classmethod
    def of(cls, values: Sequence[float]) -> Figure:
        return cls(statistics.median(values), min(values), max(values), tuple(values))


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]
