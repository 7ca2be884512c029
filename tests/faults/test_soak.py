"""Soak: a sustained workload against a server process while its memory is sampled; the memory
must stay flat. SOAK_SECONDS sets the length (CI: 20 s; the README's long soak: 600 s)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from taskqueue_proto.v1 import admin_pb2
from taskqueue_sdk import Client, TaskSpec
from tests.support.server import PROJECT_ROOT, ServerProcess


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_server_memory_stays_flat_under_sustained_load(fresh_db: str, tmp_path: Path) -> None:
    seconds = float(os.environ.get("SOAK_SECONDS", "20"))
    server = ServerProcess(fresh_db, "--reap-interval", "1")
    server.wait_serving()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKQUEUE_")}
    env.update(TASKQUEUE_ADDRESS=server.address, FAULT_RECORD_DIR=str(tmp_path))
    command = [str(Path(sys.executable).parent / "taskqueue-worker"), "tests.faults.fault_worker:worker"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    workers = [subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, **quiet) for _ in range(2)]  # type: ignore[call-overload]
    stop = threading.Event()
    enqueued = 0

    def produce() -> None:
        nonlocal enqueued
        with Client(server.address, timeout=30) as client:
            while not stop.is_set():
                client.enqueue_many([TaskSpec("job", {"kind": "ok"}, queue="faults") for _ in range(50)])
                enqueued += 50
                time.sleep(0.05)  # about 1,000 tasks/s: sustained, not flat out

    producer = threading.Thread(target=produce)
    producer.start()
    samples: list[float] = []
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            samples.append(_rss_mib(server.proc.pid))
            time.sleep(0.5)
    finally:
        stop.set()
        producer.join(30)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            [stats] = server.admin.QueueStats(admin_pb2.QueueStatsRequest(queue="faults")).queues
            if stats.queued == 0 and stats.leased == 0:
                break
            time.sleep(0.2)
        for w in workers:
            w.send_signal(signal.SIGTERM)
            w.wait(20)
        server.stop()

    warm = samples[len(samples) // 4]
    late = max(samples[-len(samples) // 4 :])
    print(f"\nsoak: {enqueued} tasks in {seconds:.0f}s; server RSS start {samples[0]:.1f} MiB, "
          f"after warm-up {warm:.1f} MiB, end {samples[-1]:.1f} MiB, late max {late:.1f} MiB")  # fmt: skip
    assert stats.succeeded == enqueued
    assert late <= warm * 1.25 + 8, f"server memory grew from {warm:.1f} to {late:.1f} MiB"
