"""The fault battery: a real workload through real server and worker processes on a cluster the
harness owns, with faults injected while it runs, then the history checked.

    python -m tests.faults.battery --tasks 100000 --faults 1000     # the long run (see README)

The CI version (tests/faults/test_fault_battery.py) runs the same thing small.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from taskqueue.storage.schema_migrations import upgrade_to_head
from taskqueue_sdk import Client, TaskSpec
from tests.faults.checker import TaskRow, Verdict, check, read_executions
from tests.faults.cluster import Cluster
from tests.faults.tcp_proxy import TcpProxy
from tests.support.server import PROJECT_ROOT, ServerProcess, free_port

FAULT_KINDS = (
    "kill_worker",
    "pause_worker",
    "kill_server",
    "restart_postgres_fast",
    "restart_postgres_immediate",
    "terminate_backends",
    "stall_worker_link",
    "cut_worker_link",
    "stall_db_link",
    "cut_db_link",
)
LEASE_SECONDS = 2.0


@dataclass
class BatteryConfig:
    tasks: int = 1500
    faults: int = 40
    workers: int = 3
    fault_every: float = 0.4  # seconds between faults
    seed: int = 1
    settle_seconds: float = 180.0  # after the last fault, time allowed for every task to finish


@dataclass
class BatteryReport:
    config: dict[str, Any]
    seconds: float = 0.0
    faults: dict[str, int] = field(default_factory=dict)  # injected, by kind
    server_crashes: int = 0  # exits nobody asked for
    worker_crashes: int = 0
    verdict: dict[str, Any] = field(default_factory=dict)
    ok: bool = False


class _Workers:
    def __init__(self, address: str, record_dir: Path, log_dir: Path) -> None:
        self.address = address
        self.record_dir = record_dir
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen[bytes]] = []
        self.paused: set[int] = set()

    def start_one(self) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKQUEUE_")}
        env.update(
            TASKQUEUE_ADDRESS=self.address,
            FAULT_RECORD_DIR=str(self.record_dir),
            TASKQUEUE_LOG_LEVEL="WARNING",
        )
        log = open(self.log_dir / f"worker-{time.monotonic_ns()}.log", "wb")  # noqa: SIM115 - child owns it
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "taskqueue-worker"), "tests.faults.fault_worker:worker"],
            cwd=PROJECT_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.procs.append(proc)
        return proc

    def alive(self) -> list[subprocess.Popen[bytes]]:
        return [p for p in self.procs if p.poll() is None]


class Battery:
    def __init__(self, config: BatteryConfig, workdir: Path) -> None:
        self.config = config
        self.workdir = workdir
        self.rand = random.Random(config.seed)
        self.report = BatteryReport(config=asdict(config))
        self.acknowledged: dict[str, dict[str, Any]] = {}
        self.produced = threading.Event()
        self._stop_faults = threading.Event()
        self._lock = threading.Lock()

    # -- setup ---------------------------------------------------------------------------------

    def _start(self) -> None:
        self.cluster = Cluster(self.workdir / "cluster", free_port())
        self.cluster.init()
        self.cluster.start()
        with psycopg.connect(self.cluster.url(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE faults")
        self.direct_url = self.cluster.url("faults")
        upgrade_to_head(self.direct_url)
        self.db_proxy = TcpProxy("127.0.0.1", self.cluster.port)
        self.server_port = free_port()
        self.server = self._new_server()
        self.worker_proxy = TcpProxy("127.0.0.1", self.server_port)
        records = self.workdir / "executions"
        records.mkdir()
        self.workers = _Workers(f"127.0.0.1:{self.worker_proxy.port}", records, self.workdir)
        for _ in range(self.config.workers):
            self.workers.start_one()

    def _new_server(self) -> ServerProcess:
        url = self.cluster.url("faults", port=self.db_proxy.port)
        for _ in range(30):  # the database may be restarting just now: the server then refuses to start
            server = ServerProcess(
                url, "--reap-interval", "0.5", "--grace-period", "2", port=self.server_port
            )
            try:
                server.wait_serving(timeout=30)
                return server
            except AssertionError:
                server.stop()
                time.sleep(0.5)
        raise RuntimeError("the server did not come back")

    # -- the workload --------------------------------------------------------------------------

    def _payload(self, i: int) -> tuple[dict[str, Any], int]:
        roll = self.rand.random()
        sleep = round(self.rand.uniform(0, 0.03), 4)
        if roll < 0.85:
            return {"kind": "ok", "sleep": sleep}, 10
        if roll < 0.93:
            return {"kind": "flaky", "fail_times": self.rand.choice((1, 2)), "sleep": sleep}, 10
        if roll < 0.97:
            return {"kind": "fail", "sleep": sleep}, 3
        return {"kind": "permanent", "sleep": sleep}, 10

    def _produce(self) -> None:
        batch = 50
        with Client(f"127.0.0.1:{self.server_port}", timeout=20) as client:
            for first in range(0, self.config.tasks, batch):
                specs, payloads = [], []
                for i in range(first, min(first + batch, self.config.tasks)):
                    payload, attempts = self._payload(i)
                    payloads.append(payload)
                    key = f"battery-{i}"
                    specs.append(
                        TaskSpec("job", payload, queue="faults", max_attempts=attempts, idempotency_key=key,
                                 backoff_base=0.05, backoff_cap=0.2)
                    )  # fmt: skip
                while True:  # keys make a retry after an unknown outcome safe
                    try:
                        results = client.enqueue_many(specs)
                        break
                    except Exception:
                        time.sleep(0.3)
                with self._lock:
                    for r, payload in zip(results, payloads, strict=True):
                        assert r.error is None, r.error
                        self.acknowledged[r.task_id] = payload
        self.produced.set()

    # -- faults --------------------------------------------------------------------------------

    def _later(self, seconds: float, action: Any) -> None:
        timer = threading.Timer(seconds, action)
        timer.daemon = True
        timer.start()

    def _inject(self, kind: str) -> None:
        if kind == "kill_worker":
            victim = self.rand.choice(self.workers.alive())
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            self.workers.start_one()
        elif kind == "pause_worker":
            victim = self.rand.choice(self.workers.alive())
            victim.send_signal(signal.SIGSTOP)  # frozen past its leases, then back
            self._later(LEASE_SECONDS * 2, lambda: victim.send_signal(signal.SIGCONT))
        elif kind == "kill_server":
            self.server.proc.send_signal(signal.SIGKILL)
            self.server.proc.wait()
            self.server.stop()
            self.server = self._new_server()
        elif kind in ("restart_postgres_fast", "restart_postgres_immediate"):
            self.cluster.restart(kind.rsplit("_", 1)[1])
        elif kind == "terminate_backends":
            with psycopg.connect(self.cluster.url(), autocommit=True) as conn:
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = 'faults' AND pid <> pg_backend_pid()"
                )
        elif kind in ("stall_worker_link", "stall_db_link"):
            proxy = self.worker_proxy if kind == "stall_worker_link" else self.db_proxy
            proxy.stall()
            self._later(self.rand.uniform(0.3, LEASE_SECONDS * 1.5), proxy.resume)
        elif kind in ("cut_worker_link", "cut_db_link"):
            (self.worker_proxy if kind == "cut_worker_link" else self.db_proxy).cut()
        self.report.faults[kind] = self.report.faults.get(kind, 0) + 1

    def _supervise(self) -> None:
        """Restart processes that died on their own, and count them: a crash is a finding."""
        if self.server.proc.poll() is not None:
            self.report.server_crashes += 1
            print(f"server exited on its own ({self.server.proc.returncode}):\n{self.server.log()[-2000:]}")
            self.server.stop()
            self.server = self._new_server()
        for proc in list(self.workers.procs):
            if proc.poll() is not None and proc.returncode not in (-signal.SIGKILL, 0):
                self.report.worker_crashes += 1
                self.workers.procs.remove(proc)
                self.workers.start_one()

    def _fault_loop(self) -> None:
        done = 0
        while done < self.config.faults and not self._stop_faults.is_set():
            time.sleep(self.config.fault_every)
            self._supervise()
            self._inject(self.rand.choice(FAULT_KINDS))
            done += 1

    # -- the end -------------------------------------------------------------------------------

    def _heal(self) -> None:
        self.worker_proxy.resume()
        self.db_proxy.resume()
        for proc in self.workers.alive():
            proc.send_signal(signal.SIGCONT)
        self._supervise()

    def _rows(self) -> dict[str, TaskRow]:
        with psycopg.connect(self.direct_url) as conn:
            rows = conn.execute(
                "SELECT id::text, status, attempts, max_attempts, lease_id::text, result,"
                " extract(epoch FROM finished_at)::float8 FROM tasks"
            ).fetchall()
            history: dict[str, list[tuple[str, str | None]]] = {}
            for task_id, outcome, error in conn.execute(
                "SELECT task_id::text, outcome, error FROM task_attempts ORDER BY id"
            ).fetchall():
                history.setdefault(task_id, []).append((outcome, error))
        return {r[0]: TaskRow(*r, history=history.get(r[0], [])) for r in rows}

    def _wait_finished(self) -> None:
        deadline = time.monotonic() + self.config.settle_seconds
        while time.monotonic() < deadline:
            with psycopg.connect(self.direct_url) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM tasks WHERE status IN ('queued', 'leased')"
                ).fetchone()
            if row and row[0] == 0:
                return
            self._supervise()
            time.sleep(0.5)

    def run(self) -> BatteryReport:
        started = time.monotonic()
        self._start()
        try:
            producer = threading.Thread(target=self._produce, name="producer")
            producer.start()
            self._fault_loop()
            producer.join()
            self._heal()
            self._wait_finished()
            verdict: Verdict = check(
                self.acknowledged, self._rows(), read_executions(self.workdir / "executions")
            )
            self.report.verdict = verdict.summary()
            self.report.ok = (
                verdict.ok and self.report.server_crashes == 0 and self.report.worker_crashes == 0
            )
        finally:
            self._stop_faults.set()
            self._shutdown()
        self.report.seconds = round(time.monotonic() - started, 1)
        return self.report

    def _shutdown(self) -> None:
        for proc in self.workers.procs:
            with contextlib.suppress(Exception):
                proc.send_signal(signal.SIGCONT)
                proc.send_signal(signal.SIGTERM)
        for proc in self.workers.procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        with contextlib.suppress(Exception):
            self.server.stop()
        self.worker_proxy.close()
        self.db_proxy.close()
        self.cluster.stop()


def run_battery(config: BatteryConfig, workdir: Path | None = None) -> BatteryReport:
    if workdir is not None:
        return Battery(config, workdir).run()
    with tempfile.TemporaryDirectory(prefix="taskqueue-faults-") as folder:
        return Battery(config, Path(folder)).run()


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.faults.battery", description=__doc__)
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--faults", type=int, default=1_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--fault-every", type=float, default=0.4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    config = BatteryConfig(args.tasks, args.faults, args.workers, args.fault_every, args.seed, 600.0)
    report = run_battery(config)
    text = json.dumps(asdict(report), indent=2, default=str)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
