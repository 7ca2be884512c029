"""Run a real taskqueue gRPC server on a real port, in a thread of the test process or as a
separate process, and talk to it with the generated stubs."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from taskqueue.app import App, start_app
from taskqueue.clock import Clock
from taskqueue.config import Settings
from taskqueue_proto.v1 import admin_pb2_grpc, taskqueue_pb2_grpc

T = TypeVar("T")
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_settings(database_url: str, **overrides: Any) -> Settings:
    base = Settings(
        database_url=database_url,
        listen="127.0.0.1:0",
        pool_size=4,
        reap_interval=timedelta(hours=1),  # tests run the reaper by hand, at the moment they choose
        grace_period=timedelta(seconds=2),
        log_json=False,
    )
    return replace(base, **overrides)


class InProcessServer:
    """A server running on its own event loop in a background thread."""

    def __init__(self, settings: Settings, clock: Clock | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="server")
        self._thread.start()
        self.app: App = self.run(start_app(settings, clock))
        self.address = f"127.0.0.1:{self.app.port}"
        self.channel = grpc.insecure_channel(self.address)
        self.tasks = taskqueue_pb2_grpc.TaskQueueStub(self.channel)
        self.admin = admin_pb2_grpc.AdminStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        return future.result(timeout)

    def call_soon(self, fn: Callable[[], None]) -> None:
        self._loop.call_soon_threadsafe(fn)

    def reap(self) -> dict[str, int]:
        return self.run(self.app.reaper.run_once())

    def stop(self) -> None:
        self.channel.close()
        self.run(self.app.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


class ServerProcess:
    """`python -m taskqueue serve` as a child process, stopped with real signals."""

    def __init__(
        self,
        database_url: str | None,
        *extra: str,
        env: dict[str, str] | None = None,
        port: int | None = None,
    ) -> None:
        self.port = port or free_port()
        self.database_url = database_url
        self.address = f"127.0.0.1:{self.port}"
        child_env = {k: v for k, v in os.environ.items() if not k.startswith("TASKQUEUE_")}
        if database_url:
            child_env["TASKQUEUE_DATABASE_URL"] = database_url
        child_env.update(env or {})
        self.log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"taskqueue-server-{self.port}.log"
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "taskqueue",
                "serve",
                "--listen",
                self.address,
                "--log-format",
                "text",
                *extra,
            ],
            env=child_env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=PROJECT_ROOT,
        )
        self.channel = grpc.insecure_channel(self.address)
        self.tasks = taskqueue_pb2_grpc.TaskQueueStub(self.channel)
        self.admin = admin_pb2_grpc.AdminStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_serving(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited with {self.proc.returncode}:\n{self.log()}")
            try:
                reply = self.health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"server not SERVING after {timeout}s:\n{self.log()}")

    def signal(self, sig: signal.Signals) -> None:
        self.proc.send_signal(sig)

    def stop(self, timeout: float = 15) -> int:
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode
