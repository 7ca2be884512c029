"""The worker the fault battery runs (`taskqueue-worker tests.faults.fault_worker:worker`).

Every execution is appended to FAULT_RECORD_DIR/<pid>.log before the handler returns, with its
lease id, so the checker can count executions and tell which attempt a stored result came from.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from taskqueue_sdk import Permanent, TaskContext, Worker

worker = Worker(queues=["faults"], concurrency=8, lease_duration=2.0, poll_wait=2.0, shutdown_grace=5.0)

_record = None


def record(event: str, ctx: TaskContext) -> None:
    global _record
    if _record is None:
        _record = open(os.path.join(os.environ["FAULT_RECORD_DIR"], f"{os.getpid()}.log"), "a", buffering=1)  # noqa: SIM115
    _record.write(f"{event} {ctx.task_id} {ctx.attempt} {ctx.lease_id} {os.getpid()} {time.time():.6f}\n")


@worker.task("job")
async def job(payload: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
    record("start", ctx)
    await asyncio.sleep(payload.get("sleep", 0.0))
    kind = payload["kind"]
    if kind == "fail" or (kind == "flaky" and ctx.attempt <= payload.get("fail_times", 1)):
        record("fail", ctx)
        raise RuntimeError(f"planned failure of attempt {ctx.attempt}")
    if kind == "permanent":
        record("fail", ctx)
        raise Permanent("planned permanent failure")
    record("end", ctx)
    return {"lease_id": ctx.lease_id, "attempt": ctx.attempt}
