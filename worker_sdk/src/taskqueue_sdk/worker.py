"""The worker: register handlers by task type, then run them with N concurrent slots.

worker = Worker(queues=["emails"], concurrency=16)

@worker.task("send_email")
async def send_email(payload, ctx):
    ...

worker.run_sync()          # or: await worker.run()
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from taskqueue_proto.v1 import taskqueue_pb2_grpc as pb_grpc
from taskqueue_sdk.handlers import Registration, register
from taskqueue_sdk.settings import ConnectionSettings
from taskqueue_sdk.signals import on_stop_signals
from taskqueue_sdk.transport import open_channel
from taskqueue_sdk.worker_runtime import WorkerRuntime

log = logging.getLogger("taskqueue_sdk.worker")

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    queues: tuple[str, ...] = ("default",)
    concurrency: int = 10
    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}")
    lease_duration: float = 30.0  # seconds; heartbeats run every third of it
    poll_wait: float = 20.0  # long-poll time of each Lease call
    shutdown_grace: float = 30.0  # how long in-flight tasks may finish after a stop signal
    non_retryable: tuple[type[BaseException], ...] = ()  # exception types that fail permanently


class Worker:
    def __init__(
        self,
        *,
        queues: Sequence[str] = ("default",),
        concurrency: int = 10,
        address: str | None = None,
        tls: bool | None = None,
        tls_ca_file: str | Path | None = None,
        worker_id: str | None = None,
        lease_duration: float = 30.0,
        poll_wait: float = 20.0,
        shutdown_grace: float = 30.0,
        non_retryable: Sequence[type[BaseException]] = (),
    ) -> None:
        options = WorkerOptions(
            queues=tuple(queues),
            concurrency=concurrency,
            lease_duration=lease_duration,
            poll_wait=poll_wait,
            shutdown_grace=shutdown_grace,
            non_retryable=tuple(non_retryable),
        )
        self.options = replace(options, worker_id=worker_id) if worker_id else options
        self._connection = (address, tls, tls_ca_file)
        self.registry: dict[str, Registration] = {}
        self._stop = asyncio.Event()
        self._force = asyncio.Event()

    def configure(self, **changes: Any) -> None:
        """Change options before running (the `taskqueue-worker` flags use this)."""
        self.options = replace(self.options, **changes)

    def task(self, type: str | None = None, *, model: Callable[[Any], Any] | None = None) -> Callable[[F], F]:
        """Register the decorated function for tasks of `type` (default: the function's name).

        The handler takes (payload) or (payload, ctx); `model`, when given, turns the decoded JSON
        payload into a typed value first (a dataclass, a pydantic model, any callable)."""

        def decorate(handler: F) -> F:
            name = type or handler.__name__
            if name in self.registry:
                raise ValueError(f"a handler for task type {name!r} is already registered")
            self.registry[name] = register(handler, model)
            return handler

        return decorate

    def stop(self) -> None:
        """Stop leasing; in-flight tasks get `shutdown_grace` seconds to finish."""
        self._stop.set()

    def stop_now(self) -> None:
        """Stop without waiting: cancel in-flight tasks and hand their leases back."""
        self._stop.set()
        self._force.set()

    async def run(self, *, burst: bool = False) -> None:
        """Work until stop() (or, with burst=True, until no task is ready and none is running)."""
        if not self.registry:
            raise RuntimeError("no handlers registered: decorate functions with @worker.task()")
        address, tls, tls_ca_file = self._connection
        settings = ConnectionSettings.resolve(address, tls=tls, tls_ca_file=tls_ca_file)
        self._stop = asyncio.Event()
        self._force = asyncio.Event()
        async with open_channel(settings) as channel:
            runtime = WorkerRuntime(
                stub=pb_grpc.TaskQueueStub(channel),
                options=self.options,
                registry=self.registry,
                call_timeout=settings.timeout.total_seconds(),
                stop=self._stop,
                force=self._force,
                burst=burst,
            )
            log.info(
                "worker %s starting: queues=%s types=%s concurrency=%d server=%s",
                self.options.worker_id,
                ",".join(self.options.queues),
                ",".join(self.registry),
                self.options.concurrency,
                settings.address,
            )
            await runtime.run()
            log.info("worker %s stopped", self.options.worker_id)

    def run_sync(self, *, burst: bool = False) -> None:
        """Blocking run with SIGTERM/SIGINT handling: the first signal stops leasing and lets
        in-flight tasks finish within the grace period; a second one stops at once."""

        async def main() -> None:
            with on_stop_signals(self._on_first_signal, self._on_second_signal):
                await self.run(burst=burst)

        asyncio.run(main())

    def _on_first_signal(self) -> None:
        log.info(
            "stop signal: no new tasks; waiting up to %gs for in-flight ones", self.options.shutdown_grace
        )
        self.stop()

    def _on_second_signal(self) -> None:
        log.warning("second stop signal: cancelling in-flight tasks and handing their leases back")
        self.stop_now()
