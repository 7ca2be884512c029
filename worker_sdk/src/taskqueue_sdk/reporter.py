"""Sends outcomes in batches: whatever finished while the previous call was in flight goes in the
next Complete or Fail call, so batching adds no waiting when the worker is idle."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

import grpc

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from taskqueue_proto.v1 import taskqueue_pb2_grpc as pb_grpc
from taskqueue_sdk.handlers import Outcome
from taskqueue_sdk.transport import Backoff

log = logging.getLogger("taskqueue_sdk.worker")

_MAX_BATCH = 500


@dataclass(slots=True)
class _Pending:
    task: pb.LeasedTask
    outcome: Outcome
    give_up_at: float  # after the lease's expiry nothing we send can be applied any more


class Reporter:
    def __init__(self, stub: pb_grpc.TaskQueueAsyncStub, worker_id: str, call_timeout: float) -> None:
        self._stub = stub
        self._worker_id = worker_id
        self._timeout = call_timeout
        self._queue: list[_Pending] = []
        self._sending: list[_Pending] = []
        self._idle = asyncio.Event()  # set while nothing is queued or being sent
        self._idle.set()
        self._wake = asyncio.Event()
        self.rejected = 0  # reports the server refused (lease lost): the late results of this worker

    def pending_leases(self) -> list[pb.LeasedTask]:
        """Tasks whose outcome is not yet acknowledged: their leases must be kept alive."""
        return [p.task for p in self._sending] + [p.task for p in self._queue]

    def submit(self, task: pb.LeasedTask, outcome: Outcome, lease_left: float) -> None:
        self._queue.append(_Pending(task, outcome, time.monotonic() + lease_left))
        self._idle.clear()
        self._wake.set()

    async def run(self) -> None:
        """Until cancelled: send what is queued, retrying transient failures with backoff."""
        backoff = Backoff(base=0.05, cap=2.0)
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                self._sending, self._queue = self._queue[:_MAX_BATCH], self._queue[_MAX_BATCH:]
                unsent, error = await self._send(self._sending)
                self._sending = []
                if not unsent:
                    backoff.reset()
                    continue
                now = time.monotonic()
                for p in unsent:
                    if p.give_up_at <= now:
                        log.warning(
                            "gave up reporting task %s: its lease expired (%s)", p.task.task_id, error
                        )
                self._queue = [p for p in unsent if p.give_up_at > now] + self._queue
                await asyncio.sleep(backoff.next_delay())
            self._idle.set()

    async def flush(self, timeout: float) -> None:
        """Wait until everything submitted so far is acknowledged (or timeout)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._idle.wait()

    async def _send(self, batch: list[_Pending]) -> tuple[list[_Pending], BaseException | None]:
        """One Complete and one Fail call at most; returns the items whose call failed."""
        successes = [p for p in batch if p.outcome.succeeded]
        failures = [p for p in batch if not p.outcome.succeeded]
        groups: list[tuple[list[_Pending], Awaitable[Any]]] = []
        if successes:
            completions = [
                pb.Completion(task_id=p.task.task_id, lease_id=p.task.lease_id, result=p.outcome.result_json)
                for p in successes
            ]
            request = pb.CompleteRequest(worker_id=self._worker_id, completions=completions)
            groups.append((successes, self._stub.Complete(request, timeout=self._timeout)))
        if failures:
            items = [
                pb.Failure(
                    task_id=p.task.task_id,
                    lease_id=p.task.lease_id,
                    error=p.outcome.error,
                    permanent=p.outcome.permanent,
                )
                for p in failures
            ]
            request_f = pb.FailRequest(worker_id=self._worker_id, failures=items)
            groups.append((failures, self._stub.Fail(request_f, timeout=self._timeout)))
        results = await asyncio.gather(*(self._apply(g, call) for g, call in groups), return_exceptions=True)
        unsent: list[_Pending] = []
        error: BaseException | None = None
        for (group, _), result in zip(groups, results, strict=True):
            if isinstance(result, grpc.RpcError):
                unsent += group
                error = result
            elif isinstance(result, BaseException):
                raise result
        return unsent, error

    async def _apply(self, items: list[_Pending], call: Awaitable[Any]) -> None:
        reply = await call
        for p, result in zip(items, reply.results, strict=True):
            if result.status.code != 0:
                self.rejected += 1
                log.warning(
                    "server rejected the outcome of task %s (attempt %d): %s",
                    p.task.task_id,
                    p.task.attempt,
                    result.status.message,
                )
