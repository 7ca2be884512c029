"""The producer client: enqueue, read, cancel and wait for tasks.

`AsyncClient` is the one implementation; `Client` is a thin synchronous facade that runs it on a
private event loop, for code that is not async.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from taskqueue_proto.v1 import taskqueue_pb2_grpc as pb_grpc
from taskqueue_sdk.enqueue_coalescing import EnqueueCoalescer
from taskqueue_sdk.errors import DeadlineExceeded, TaskCancelled, TaskFailed, TaskQueueError, error_for
from taskqueue_sdk.messages import Seconds, TaskInfo, TaskSpec, task_info
from taskqueue_sdk.settings import ConnectionSettings
from taskqueue_sdk.transport import Backoff, call_with_retry, open_channel

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class EnqueueResult:
    """One item of enqueue_many: the task id, whether it was new, or the error for this item."""

    task_id: str
    created: bool
    error: TaskQueueError | None


class AsyncClient:
    """Producer client for asyncio code. Use as `async with AsyncClient(...) as client:`."""

    def __init__(
        self,
        address: str | None = None,
        *,
        tls: bool | None = None,
        tls_ca_file: str | Path | None = None,
        timeout: float | timedelta | None = None,
    ) -> None:
        self.settings = ConnectionSettings.resolve(address, tls=tls, tls_ca_file=tls_ca_file, timeout=timeout)
        self._channel = open_channel(self.settings)
        self._stub = pb_grpc.TaskQueueStub(self._channel)
        self._coalescer = EnqueueCoalescer(self._send_enqueue)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def enqueue(
        self,
        type: str,
        payload: Any = None,
        *,
        queue: str = "default",
        priority: int = 0,
        delay: Seconds | None = None,
        run_at: datetime | None = None,
        max_attempts: int | None = None,
        timeout: Seconds | None = None,
        idempotency_key: str | None = None,
        backoff_base: Seconds | None = None,
        backoff_cap: Seconds | None = None,
    ) -> str:
        """Enqueue one task; returns its id (the existing one for a repeated idempotency key).

        Raises DuplicateTask when the key is used with another payload, InvalidRequest when the
        server rejects a field."""
        spec = TaskSpec(
            type, payload, queue, priority, delay, run_at, max_attempts, timeout,
            idempotency_key, backoff_base, backoff_cap,
        )  # fmt: skip
        [result] = await self.enqueue_many([spec])
        if result.error is not None:
            raise result.error
        return result.task_id

    async def enqueue_many(self, specs: Iterable[TaskSpec]) -> list[EnqueueResult]:
        """Enqueue many tasks (at most 1000): one result per task, in order.

        Concurrent calls share RPCs (see enqueue_coalescing). Retried on UNAVAILABLE, so without
        idempotency keys a retry after a lost answer can enqueue a task twice (at-least-once);
        with keys it cannot."""
        replies = await self._coalescer.enqueue([s.to_proto() for s in specs])
        return [
            EnqueueResult(
                r.task_id, r.created, error_for(r.status.code, r.status.message) if r.status.code else None
            )
            for r in replies
        ]

    async def _send_enqueue(self, tasks: list[pb.NewTask]) -> list[pb.EnqueueResult]:
        request = pb.EnqueueRequest(tasks=tasks)
        reply = await call_with_retry(lambda t: self._stub.Enqueue(request, timeout=t), self.settings)
        return list(reply.results)

    async def get(self, task_id: str) -> TaskInfo:
        request = pb.GetTaskRequest(task_id=task_id)
        return task_info(
            await call_with_retry(lambda t: self._stub.GetTask(request, timeout=t), self.settings)
        )

    async def cancel(self, task_id: str) -> TaskInfo:
        """Cancel a queued task now, or ask the worker running it to stop. FailedPrecondition if
        the task already finished."""
        request = pb.CancelTaskRequest(task_id=task_id)
        return task_info(
            await call_with_retry(lambda t: self._stub.CancelTask(request, timeout=t), self.settings)
        )

    async def wait(self, task_id: str, timeout: Seconds = 60.0, poll_interval: float = 0.5) -> Any:
        """Wait for the task to finish and return its result.

        Raises TaskFailed (dead, with its last error), TaskCancelled, or DeadlineExceeded."""
        limit = timeout.total_seconds() if isinstance(timeout, timedelta) else timeout
        deadline = time.monotonic() + limit
        backoff = Backoff(base=0.02, cap=poll_interval)
        while True:
            info = await self.get(task_id)
            if info.status == "succeeded":
                return info.result
            if info.status == "dead":
                raise TaskFailed(task_id, info.last_error)
            if info.status == "cancelled":
                raise TaskCancelled(f"task {task_id} was cancelled")
            left = deadline - time.monotonic()
            if left <= 0:
                raise DeadlineExceeded(f"task {task_id} is still {info.status} after {limit:g}s")
            await asyncio.sleep(min(left, max(backoff.next_delay(), 0.01)))


class Client:
    """Synchronous producer client; same methods as AsyncClient. Use as `with Client() as client:`."""

    def __init__(
        self,
        address: str | None = None,
        *,
        tls: bool | None = None,
        tls_ca_file: str | Path | None = None,
        timeout: float | timedelta | None = None,
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="taskqueue-client", daemon=True)
        self._thread.start()

        async def make() -> AsyncClient:
            return AsyncClient(address, tls=tls, tls_ca_file=tls_ca_file, timeout=timeout)

        self._async = self._run(make())

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._run(self._async.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def enqueue(self, type: str, payload: Any = None, **options: Any) -> str:
        return self._run(self._async.enqueue(type, payload, **options))

    def enqueue_many(self, specs: Iterable[TaskSpec]) -> list[EnqueueResult]:
        return self._run(self._async.enqueue_many(list(specs)))

    def get(self, task_id: str) -> TaskInfo:
        return self._run(self._async.get(task_id))

    def cancel(self, task_id: str) -> TaskInfo:
        return self._run(self._async.cancel(task_id))

    def wait(self, task_id: str, timeout: Seconds = 60.0, poll_interval: float = 0.5) -> Any:
        return self._run(self._async.wait(task_id, timeout, poll_interval))
