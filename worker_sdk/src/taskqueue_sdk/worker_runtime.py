"""The running worker: lease into free slots, run handlers, heartbeat, report, shut down in two
phases. One instance per `Worker.run()`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from taskqueue_proto.v1 import taskqueue_pb2_grpc as pb_grpc
from taskqueue_sdk.context import TaskContext
from taskqueue_sdk.handlers import Registration, run_handler
from taskqueue_sdk.messages import duration
from taskqueue_sdk.reporter import Reporter
from taskqueue_sdk.transport import Backoff

if TYPE_CHECKING:
    from taskqueue_sdk.worker import WorkerOptions

log = logging.getLogger("taskqueue_sdk.worker")

_LEASE_GATHER_SECONDS = 0.005

# The worker's clock for leases. Monotonic time keeps running while a process is stopped, which is
# exactly what tells a worker thawed after SIGSTOP that its leases may be gone.
_now = time.monotonic


@dataclass(slots=True)
class _Running:
    task: pb.LeasedTask
    registration: Registration
    ctx: TaskContext
    job: asyncio.Task[None]
    lease_until: float  # _now() by which the lease runs out, as far as this worker can tell
    superseded: bool = False  # the server leased this task to us again: this lease is gone


class WorkerRuntime:
    def __init__(
        self,
        *,
        stub: pb_grpc.TaskQueueAsyncStub,
        options: WorkerOptions,
        registry: Mapping[str, Registration],
        call_timeout: float,
        stop: asyncio.Event,
        force: asyncio.Event,
        burst: bool,
    ) -> None:
        self._stub = stub
        self._options = options
        self._registry = registry
        self._call_timeout = call_timeout
        self._stop = stop
        self._force = force
        self._burst = burst
        self._running: dict[str, _Running] = {}  # by lease id: one task may come back to us
        self._current_lease: dict[str, str] = {}  # task id -> its newest lease id, among _running
        self._slot_freed = asyncio.Event()
        self._executor = ThreadPoolExecutor(options.concurrency, thread_name_prefix="taskqueue-handler")
        self.reporter = Reporter(stub, options.worker_id, call_timeout)
        self.leased = 0

    async def run(self) -> None:
        background = [
            asyncio.create_task(self.reporter.run(), name="reporter"),
            asyncio.create_task(self._heartbeat_loop(), name="heartbeats"),
        ]
        main = asyncio.create_task(self._lease_loop(), name="lease-loop")
        try:
            done, _ = await asyncio.wait([main, *background], return_when=asyncio.FIRST_COMPLETED)
            if main not in done:
                # A background loop died: running half-alive would hide it. Stop, and say why.
                self._stop.set()
                self._force.set()
                await main
                for task in done:
                    task.result()
            main.result()
            await self._finish_in_flight()
            await self.reporter.flush(self._call_timeout)
        finally:
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            self._executor.shutdown(wait=False, cancel_futures=True)

    # -- leasing -----------------------------------------------------------------------------

    async def _until_stopped(self, aw: Awaitable[Any]) -> asyncio.Future[Any] | None:
        """Wait for aw or the stop signal; the future of aw if it finished first, else None."""
        future = asyncio.ensure_future(aw)
        stopped = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait([future, stopped], return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        return future if future.done() else None

    async def _lease_loop(self) -> None:
        backoff = Backoff(base=0.1, cap=3.0)  # short: a restarted server should see its workers soon
        while not self._stop.is_set():
            free = self._options.concurrency - len(self._running)
            if free <= 0:
                await self._wait_for_slot()
                continue
            if free < self._options.concurrency // 2 and self._running:
                # Gather freed slots for a moment, so that one Lease call fills many of them
                # rather than one call per slot (fast handlers would otherwise cost an RPC each).
                await self._until_stopped(asyncio.sleep(_LEASE_GATHER_SECONDS))
                free = self._options.concurrency - len(self._running)
            wait = 0.0 if self._burst else self._options.poll_wait
            request = pb.LeaseRequest(
                worker_id=self._options.worker_id,
                queues=list(self._options.queues),
                task_types=list(self._registry),
                lease_duration=duration(self._options.lease_duration),
                max_tasks=free,
                wait=duration(wait),
            )
            call = asyncio.ensure_future(self._stub.Lease(request, timeout=wait + self._call_timeout))
            finished = await self._until_stopped(call)
            if finished is None:
                call.cancel()  # the server hands back whatever that call had leased
                with contextlib.suppress(asyncio.CancelledError, grpc.RpcError):
                    await call
                break
            try:
                reply = finished.result()
                # The server granted these leases just before answering (however long the call
                # long-polled), so they run for about lease_duration from now.
                received_at = _now()
            except grpc.RpcError as e:
                delay = backoff.next_delay()
                log.warning("lease failed (%s: %s); retrying in %.2fs", e.code().name, e.details(), delay)
                await self._until_stopped(asyncio.sleep(delay))
                continue
            backoff.reset()
            if self._stop.is_set() and reply.tasks:
                await self._release(list(reply.tasks))  # arrived as we stopped: not ours to run
                break
            for task in reply.tasks:
                self._start(task, received_at + self._options.lease_duration)
            if not reply.tasks and self._burst:
                if not self._running:
                    break
                await self._wait_for_slot()

    async def _wait_for_slot(self) -> None:
        await self._until_stopped(self._slot_freed.wait())
        self._slot_freed.clear()

    # -- running -----------------------------------------------------------------------------

    def _start(self, task: pb.LeasedTask, lease_until: float) -> None:
        self.leased += 1
        older = self._running.get(self._current_lease.get(task.task_id, ""))
        if older is not None and not older.superseded:
            # A newer lease on the same task proves the older one expired and was reaped.
            older.superseded = True
            self._interrupt(older, "lease lost")
        self._current_lease[task.task_id] = task.lease_id
        registration = self._registry[task.type]

        async def extend() -> None:
            await self._heartbeat([task])

        ctx = TaskContext(
            task.task_id,
            task.type,
            task.queue,
            task.attempt,
            task.max_attempts,
            task.lease_expires_at,
            extend,
            task.lease_id,
        )
        job = asyncio.create_task(self._execute(task, registration, ctx), name=f"task-{task.task_id}")
        self._running[task.lease_id] = _Running(task, registration, ctx, job, lease_until)

    async def _execute(self, task: pb.LeasedTask, registration: Registration, ctx: TaskContext) -> None:
        timeout = task.timeout.ToTimedelta().total_seconds() or None
        entry = self._running.get(task.lease_id)
        if entry is not None and _now() >= entry.lease_until:
            # This process was frozen (or starved) between leasing the task and starting it: the
            # lease may be gone and the task done by another worker. Never start stale work.
            self._running.pop(task.lease_id, None)
            if self._current_lease.get(task.task_id) == task.lease_id:
                del self._current_lease[task.task_id]
            self._slot_freed.set()
            log.warning(
                "task %s: its lease may have expired before it could start; not running it", task.task_id
            )
            return
        try:
            outcome = await run_handler(
                registration, task.payload, ctx, timeout, self._executor, self._options.non_retryable
            )
        finally:
            entry = self._running.pop(task.lease_id, None)
            if self._current_lease.get(task.task_id) == task.lease_id:
                del self._current_lease[task.task_id]
            self._slot_freed.set()
        if not outcome.report:
            log.warning(
                "task %s (attempt %d) stopped: %s; nothing reported",
                task.task_id,
                task.attempt,
                outcome.error,
            )
            return
        if not outcome.succeeded:
            log.info("task %s (attempt %d) failed: %s", task.task_id, task.attempt, outcome.error)
        lease_until = entry.lease_until if entry else _now()
        self.reporter.submit(task, outcome, lease_until - _now())

    # -- heartbeats --------------------------------------------------------------------------

    async def _heartbeat_loop(self) -> None:
        interval = self._options.lease_duration / 3
        while True:
            await asyncio.sleep(interval)
            current = [r.task for r in self._running.values() if not r.superseded]
            leases = {t.task_id: t for t in self.reporter.pending_leases()} | {t.task_id: t for t in current}
            if leases:
                await self._heartbeat(list(leases.values()))

    async def _heartbeat(self, leases: list[pb.LeasedTask]) -> None:
        request = pb.HeartbeatRequest(
            worker_id=self._options.worker_id,
            leases=[pb.LeaseRef(task_id=t.task_id, lease_id=t.lease_id) for t in leases],
            lease_duration=duration(self._options.lease_duration),
        )
        sent_at = _now()
        try:
            reply = await self._stub.Heartbeat(request, timeout=self._call_timeout)
        except grpc.RpcError as e:
            log.warning("heartbeat failed (%s: %s); will try again", e.code().name, e.details())
            return
        sent = {t.task_id: t.lease_id for t in leases}
        for result in reply.results:
            entry = self._running.get(sent.get(result.task_id, ""))
            if entry is None:
                continue
            if result.status.code != 0:
                log.warning("task %s: %s; stopping its handler", result.task_id, result.status.message)
                self._interrupt(entry, "lease lost")
            elif result.cancel_requested:
                log.info("task %s was cancelled; stopping its handler", result.task_id)
                self._interrupt(entry, "cancel requested")
            else:
                entry.lease_until = sent_at + self._options.lease_duration

    def _interrupt(self, entry: _Running, reason: str) -> None:
        """Async handlers are cancelled; sync ones are told through ctx.cancelled."""
        entry.ctx._stop(reason)
        if entry.registration.is_async:
            entry.job.cancel()

    # -- shutdown ----------------------------------------------------------------------------

    async def _finish_in_flight(self) -> None:
        """Phase two of a stop: let running tasks finish within the grace period (heartbeats go on),
        then cancel the rest and hand their leases back."""
        if self._running and not self._force.is_set():
            log.info(
                "waiting up to %gs for %d running tasks", self._options.shutdown_grace, len(self._running)
            )
            all_done = asyncio.ensure_future(asyncio.wait([r.job for r in self._running.values()]))
            forced = asyncio.ensure_future(self._force.wait())
            await asyncio.wait(
                [all_done, forced], timeout=self._options.shutdown_grace, return_when=asyncio.FIRST_COMPLETED
            )
            all_done.cancel()
            forced.cancel()
        if not self._running:
            return
        left = list(self._running.values())
        log.warning("handing back %d unfinished tasks", len(left))
        for entry in left:
            self._interrupt(entry, "worker shutting down")
        await self._release([e.task for e in left])
        await asyncio.wait([e.job for e in left], timeout=1.0)

    async def _release(self, tasks: list[pb.LeasedTask]) -> None:
        request = pb.ReleaseRequest(
            worker_id=self._options.worker_id,
            leases=[pb.LeaseRef(task_id=t.task_id, lease_id=t.lease_id) for t in tasks],
        )
        try:
            await self._stub.Release(request, timeout=self._call_timeout)
        except grpc.RpcError as e:
            log.warning(
                "could not hand back %d leases (%s); they expire on their own", len(tasks), e.code().name
            )
