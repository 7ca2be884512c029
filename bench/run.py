"""Run the whole comparison and print it: `python -m bench.run` (or `make bench`).

Every system gets the same workloads, the same process layout and a fresh database on one private
PostgreSQL server that the benchmark starts itself. Each figure is the median of --runs runs, with
the min and max beside it. `--quick` runs tiny sizes once, so CI keeps the benchmark working.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from dataclasses import asdict, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from bench.measure import Figure
from bench.private_postgres import drop_database, fresh_database, private_postgres, server_version
from bench.workloads import Shape, enqueue_rate, pickup_latency, status_reads, throughput

SYSTEMS = {
    "taskqueue": "bench.systems.taskqueue_grpc",
    "raw_sql": "bench.systems.raw_sql",
    "pgqueuer": "bench.systems.pgqueuer_peer",
    "procrastinate": "bench.systems.procrastinate_peer",
}
HIGHER_IS_BETTER = {
    "throughput",
    "throughput_with_history",
    "enqueue_batched",
    "enqueue_single",
    "status_reads",
}


def _versions() -> dict[str, str]:
    out = {}
    for dist in (
        "taskqueue",
        "taskqueue-sdk",
        "grpcio",
        "protobuf",
        "psycopg",
        "pgqueuer",
        "procrastinate",
        "asyncpg",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def _measure(system_cls: Any, server_url: str, key: str, work: Any) -> Any:
    dsn = fresh_database(server_url, key)
    system = system_cls(dsn)
    try:
        return work(system)
    finally:
        system.close()
        drop_database(server_url, dsn)


WORKLOADS = (
    "throughput",
    "enqueue_batched",
    "enqueue_single",
    "pickup",
    "status_reads",
    "throughput_with_history",
)


def bench_system(
    key: str, server_url: str, shape: Shape, runs: int, history: int, workloads: tuple[str, ...] = WORKLOADS
) -> dict[str, Any]:
    system_cls = importlib.import_module(SYSTEMS[key]).System
    results: dict[str, list[Any]] = {}

    def record(name: str, value: Any) -> None:
        results.setdefault(name, []).append(value)
        shown = value if not isinstance(value, float) else round(value, 1)
        print(f"  {key:14} {name:24} {shown}", flush=True)

    for _ in range(runs):
        if "throughput" in workloads:
            record("throughput", _measure(system_cls, server_url, key, lambda s: throughput(s, shape)))
        if "enqueue_batched" in workloads:
            record(
                "enqueue_batched",
                _measure(system_cls, server_url, key, lambda s: enqueue_rate(s, shape, True)),
            )
        if "enqueue_single" in workloads:
            record(
                "enqueue_single",
                _measure(system_cls, server_url, key, lambda s: enqueue_rate(s, shape, False)),
            )
        if "pickup" in workloads and hasattr(system_cls, "produce_paced"):
            record("pickup", _measure(system_cls, server_url, key, lambda s: pickup_latency(s, shape)))
        if "status_reads" in workloads and hasattr(system_cls, "read_status"):
            record("status_reads", _measure(system_cls, server_url, key, lambda s: status_reads(s, shape)))
        if "throughput_with_history" in workloads and history and hasattr(system_cls, "seed_history"):

            def with_history(s: Any) -> float:
                s.seed_history(history)
                return throughput(s, shape)

            record("throughput_with_history", _measure(system_cls, server_url, key, with_history))
    summary: dict[str, Any] = {}
    for name, values in results.items():
        if name == "pickup":
            summary[name] = {
                stat: asdict(Figure.of([v[stat] for v in values])) for stat in ("p50_ms", "p99_ms", "max_ms")
            }
        else:
            summary[name] = asdict(Figure.of(values))
    return summary


def _cell(summary: dict[str, Any], name: str, stat: str | None = None) -> str:
    figure = summary.get(name)
    if figure is None:
        return "-"
    if stat:
        figure = figure[stat]
    return f"{figure['median']:,.1f} [{figure['low']:,.1f}-{figure['high']:,.1f}]"


def print_table(report: dict[str, Any]) -> None:
    systems = report["systems"]
    rows = [
        ("throughput (tasks/s)", "throughput", None),
        ("throughput, 1M history", "throughput_with_history", None),
        ("enqueue batched (tasks/s)", "enqueue_batched", None),
        ("enqueue single (tasks/s)", "enqueue_single", None),
        ("pickup p50 (ms)", "pickup", "p50_ms"),
        ("pickup p99 (ms)", "pickup", "p99_ms"),
        ("pickup max (ms)", "pickup", "max_ms"),
        ("GetTask (calls/s)", "status_reads", None),
    ]
    header = ["figure (median [min-max])", *systems]
    table = [header] + [
        [label, *(_cell(systems[s], name, stat) for s in systems)] for label, name, stat in rows
    ]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    print()
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    print()
    for line in report["ratios"]:
        print(line)


def ratios(systems: dict[str, Any]) -> list[str]:
    ours = systems.get("taskqueue")
    if not ours:
        return []
    lines = []
    for other in systems:
        if other == "taskqueue":
            continue
        for name in ("throughput", "enqueue_batched", "enqueue_single"):
            if name in ours and name in systems[other]:
                ratio = ours[name]["median"] / systems[other][name]["median"]
                lines.append(f"taskqueue / {other}: {name} x{ratio:.2f}")
    if "throughput_with_history" in ours:
        change = ours["throughput_with_history"]["median"] / ours["throughput"]["median"] - 1
        lines.append(f"taskqueue throughput with history vs empty table: {change:+.0%}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one run: for CI")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tasks", type=int, help="tasks per throughput run (default 20000)")
    parser.add_argument(
        "--history", type=int, default=1_000_000, help="finished tasks seeded for the history run"
    )
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated: " + ", ".join(SYSTEMS))
    parser.add_argument(
        "--workloads", default=",".join(WORKLOADS), help="comma-separated: " + ", ".join(WORKLOADS)
    )
    parser.add_argument("--out", type=Path, help="write the JSON report here")
    args = parser.parse_args(argv)

    shape = Shape()
    runs, history = args.runs, args.history
    if args.quick:
        shape = replace(
            shape, tasks=1_000, single_tasks=200, pickup_tasks=40, read_seconds=0.5, concurrency=16
        )
        runs, history = 1, 5_000
    if args.tasks:
        shape = replace(shape, tasks=args.tasks)

    wanted = [s.strip() for s in args.systems.split(",") if s.strip()]
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "versions": _versions(),
        "shape": asdict(shape),
        "runs": runs,
        "history_rows": history,
        "systems": {},
        "skipped": {},
    }
    started = time.monotonic()
    with private_postgres() as server_url:
        report["machine"]["postgres"] = server_version(server_url)
        for key in wanted:
            try:
                importlib.import_module(SYSTEMS[key])
            except ImportError as e:
                report["skipped"][key] = f"not installed ({e.name}); pip install -e '.[bench]'"
                print(f"skipping {key}: {report['skipped'][key]}")
                continue
            print(f"{key}:", flush=True)
            workloads = tuple(w.strip() for w in args.workloads.split(",") if w.strip())
            report["systems"][key] = bench_system(key, server_url, shape, runs, history, workloads)
    report["ratios"] = ratios(report["systems"])
    report["seconds"] = round(time.monotonic() - started, 1)
    print_table(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
