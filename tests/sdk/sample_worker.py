"""A worker for the SDK tests, run in-process or with `taskqueue-worker tests.sdk.sample_worker:worker`.

Every execution is recorded ("start"/"end" lines with task id, attempt and pid) in the file named
by SAMPLE_RECORD_FILE, so tests can count executions across processes and kills.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from taskqueue_sdk import Permanent, TaskContext, Worker

worker = Worker(queues=["sample"], concurrency=4, lease_duration=2.0, shutdown_grace=10.0)


def record(event: str, ctx: TaskContext) -> None:
    path = os.environ.get("SAMPLE_RECORD_FILE")
    if path:
        with open(path, "a") as f:
            f.write(f"{event} {ctx.task_id} {ctx.attempt} {os.getpid()}\n")


@worker.task("sleep")
async def sleep(payload: dict[str, Any], ctx: TaskContext) -> Any:
    record("start", ctx)
    await asyncio.sleep(payload.get("seconds", 0))
    record("end", ctx)
    return payload.get("result")


@worker.task("sync_sleep")
def sync_sleep(payload: dict[str, Any], ctx: TaskContext) -> Any:
    record("start", ctx)
    time.sleep(payload.get("seconds", 0))
    record("end", ctx)
    return payload.get("result")


@worker.task("fail")
def fail(payload: dict[str, Any]) -> None:
    raise RuntimeError(payload.get("error", "always fails"))


@worker.task("permanent")
def permanent(payload: dict[str, Any]) -> None:
    raise Permanent(ValueError(payload.get("error", "cannot succeed")))
