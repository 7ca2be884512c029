"""The workloads, identical for every system: throughput, enqueue rate, pickup latency, reads."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from bench.measure import Shared, join_all, percentile, start, wait_ready


@dataclass(frozen=True)
class Shape:
    """How many processes do what; the same for every system in a run."""

    tasks: int = 20_000
    producers: int = 2
    workers: int = 2
    batch: int = 500
    concurrency: int = (
        256  # per worker process: tasks in flight (PGQueuer and Procrastinate use their own best settings)
    )
    single_inflight: int = 16  # concurrent single-task enqueues per producer
    single_tasks: int = 4_000
    pickup_rate: float = 200.0
    pickup_tasks: int = 1_000
    read_seconds: float = 3.0


def _collect(shared: Shared, kind: str, expected: int, timeout: float = 60) -> list[tuple[Any, ...]]:
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < expected and time.monotonic() < deadline:
        try:
            record = shared.results.get(timeout=0.5)
        except Exception:
            continue
        if record[0] == kind:
            out.append(record)
    return out


def throughput(system: Any, shape: Shape) -> float:
    """Tasks/s from the first enqueue to the last completion, producers and workers concurrent."""
    shared = Shared.make()
    workers = [start(system.work, system.config, shared, shape.concurrency) for _ in range(shape.workers)]
    wait_ready(shared, shape.workers)
    per = shape.tasks // shape.producers
    producers = [
        start(system.produce, system.config, shared, per, shape.batch, 1) for _ in range(shape.producers)
    ]
    wait_ready(shared, shape.producers)
    began = time.monotonic()
    shared.go.set()
    join_all(producers)
    while system.remaining() > 0:
        time.sleep(0.01)
    elapsed = time.monotonic() - began
    shared.stop.set()
    join_all(workers)
    return per * shape.producers / elapsed


def enqueue_rate(system: Any, shape: Shape, batched: bool) -> float:
    """Tasks/s enqueued by the producers alone (no workers), batched or one task per call."""
    shared = Shared.make()
    count = shape.tasks if batched else shape.single_tasks
    per = count // shape.producers
    batch, inflight = (shape.batch, 1) if batched else (1, shape.single_inflight)
    producers = [
        start(system.produce, system.config, shared, per, batch, inflight) for _ in range(shape.producers)
    ]
    wait_ready(shared, shape.producers)
    began = time.monotonic()
    shared.go.set()
    ends = _collect(shared, "produced", shape.producers, timeout=300)
    join_all(producers)
    return per * shape.producers / (max(e[1] for e in ends) - began)


def pickup_latency(system: Any, shape: Shape) -> dict[str, float]:
    """Single enqueues at a steady rate on an idle system: Enqueue returning -> handler starting (ms)."""
    shared = Shared.make()
    workers = [start(system.work, system.config, shared, shape.concurrency) for _ in range(shape.workers)]
    wait_ready(shared, shape.workers)
    producer = start(system.produce_paced, system.config, shared, shape.pickup_tasks, shape.pickup_rate)
    wait_ready(shared, 1)
    time.sleep(0.5)  # let every worker settle into its idle long-poll
    shared.go.set()
    sent: dict[int, float] = {}
    started: dict[int, float] = {}
    deadline = time.monotonic() + shape.pickup_tasks / shape.pickup_rate + 30
    while (
        len(sent) < shape.pickup_tasks or len(started) < shape.pickup_tasks
    ) and time.monotonic() < deadline:
        try:
            record = shared.results.get(timeout=0.5)
        except Exception:
            continue
        if record[0] == "sent":
            sent[record[1]] = record[2]
        elif record[0] == "started":
            started.setdefault(record[1], record[2])
    join_all([producer])
    shared.stop.set()
    join_all(workers)
    latencies = [(started[s] - sent[s]) * 1000 for s in sent if s in started]
    if len(latencies) < shape.pickup_tasks:
        raise RuntimeError(f"only {len(latencies)} of {shape.pickup_tasks} tasks were picked up")
    return {
        "p50_ms": percentile(latencies, 50),
        "p99_ms": percentile(latencies, 99),
        "max_ms": max(latencies),
    }


def status_reads(system: Any, shape: Shape) -> float:
    """GetTask calls/s from the producer processes, several calls in flight each."""
    ids = system.sample_ids(1000)
    shared = Shared.make()
    readers = [
        start(system.read_status, system.config, shared, ids, shape.read_seconds, shape.single_inflight)
        for _ in range(shape.producers)
    ]
    wait_ready(shared, shape.producers)
    shared.go.set()
    counts = _collect(shared, "reads", shape.producers, timeout=shape.read_seconds + 60)
    join_all(readers)
    return sum(c[1] for c in counts) / shape.read_seconds
