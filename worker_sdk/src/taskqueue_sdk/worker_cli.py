"""`taskqueue-worker module.path:worker` runs a Worker defined in your code, like `celery -A`."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from taskqueue_sdk.worker import Worker


def load_worker(target: str) -> Worker:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise SystemExit(f"taskqueue-worker: expected module.path:attribute, got {target!r}")
    sys.path.insert(0, os.getcwd())  # like `python -m`: the current folder's modules are importable
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise SystemExit(f"taskqueue-worker: cannot import {module_name!r}: {e}") from None
    worker = getattr(module, attr, None)
    if not isinstance(worker, Worker):
        raise SystemExit(f"taskqueue-worker: {target} is not a taskqueue_sdk.Worker")
    return worker


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="taskqueue-worker", description="Run a taskqueue worker.")
    parser.add_argument("target", help="the Worker object, as module.path:attribute")
    parser.add_argument("--concurrency", type=int, help="concurrent tasks (default: the Worker's)")
    parser.add_argument("--queues", help="comma-separated queues to lease from (default: the Worker's)")
    parser.add_argument("--lease-duration", type=float, help="lease seconds (default: the Worker's)")
    parser.add_argument("--shutdown-grace", type=float, help="seconds in-flight tasks get at SIGTERM")
    parser.add_argument("--burst", action="store_true", help="exit when no task is ready and none runs")
    parser.add_argument(
        "--log-level",
        default=os.environ.get("TASKQUEUE_LOG_LEVEL", "INFO"),
        help="[env TASKQUEUE_LOG_LEVEL; default INFO]",
    )
    parser.epilog = (
        "The server address comes from TASKQUEUE_ADDRESS (default 127.0.0.1:50051) "
        "unless the Worker sets one; TASKQUEUE_TLS and TASKQUEUE_TLS_CA_FILE turn on TLS."
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    worker = load_worker(args.target)
    changes: dict[str, object] = {}
    if args.concurrency is not None:
        if args.concurrency < 1:
            parser.error("--concurrency must be at least 1")
        changes["concurrency"] = args.concurrency
    if args.queues:
        changes["queues"] = tuple(q.strip() for q in args.queues.split(",") if q.strip())
    if args.lease_duration is not None:
        changes["lease_duration"] = args.lease_duration
    if args.shutdown_grace is not None:
        changes["shutdown_grace"] = args.shutdown_grace
    worker.configure(**changes)
    worker.run_sync(burst=args.burst)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
