"""Fixtures for SDK tests: a server process of their own, and workers as real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.server import PROJECT_ROOT, ServerProcess


class WorkerProcess:
    """`taskqueue-worker tests.sdk.sample_worker:worker` as a child process."""

    def __init__(self, address: str, record_file: Path, *flags: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKQUEUE_")}
        env.update(TASKQUEUE_ADDRESS=address, SAMPLE_RECORD_FILE=str(record_file))
        self.log_path = record_file.with_suffix(f".worker{time.monotonic_ns()}.log")
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in wait()
        worker_cli = Path(sys.executable).parent / "taskqueue-worker"
        self.proc = subprocess.Popen(
            [str(worker_cli), "tests.sdk.sample_worker:worker", *flags],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            self._log.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.wait(10)


def read_records(path: Path) -> list[tuple[str, str, int, int]]:
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        event, task_id, attempt, pid = line.split()
        rows.append((event, task_id, int(attempt), int(pid)))
    return rows


def wait_for(condition: Callable[[], object], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


@pytest.fixture
def server_process(fresh_db: str) -> Iterator[ServerProcess]:
    server = ServerProcess(fresh_db, "--reap-interval", "0.5")
    server.wait_serving()
    yield server
    server.stop()


@pytest.fixture
def records(tmp_path: Path) -> Path:
    return tmp_path / "executions.txt"
