"""The fault battery, CI size: real processes, real signals, a real PostgreSQL restarted under
load. Fails on any lost task, stale overwrite, task run after success, wrong dead letter or crash."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import pytest

from tests.faults.battery import FAULT_KINDS, BatteryConfig, run_battery


@pytest.mark.timeout(900)
def test_no_task_is_lost_or_overwritten_under_faults(tmp_path: Path) -> None:
    config = BatteryConfig(
        tasks=int(os.environ.get("FAULT_TASKS", "1500")),
        faults=int(os.environ.get("FAULT_COUNT", "40")),
        workers=3,
        fault_every=0.4,
        seed=int(os.environ.get("FAULT_SEED", "7")),
        settle_seconds=150,
    )
    report = run_battery(config, tmp_path)
    print(json.dumps(asdict(report), indent=2, default=str))
    verdict = report.verdict
    assert verdict["tasks"] == config.tasks
    assert verdict["lost"] == 0 and verdict["unfinished"] == 0, verdict
    assert verdict["stale_overwrites"] == 0, verdict
    assert verdict["ran_after_success"] == 0, verdict
    assert verdict["wrongly_dead"] == 0 and verdict["wrongly_alive"] == 0, verdict
    assert report.server_crashes == 0 and report.worker_crashes == 0, report
    assert sum(report.faults.values()) == config.faults
    assert set(report.faults) <= set(FAULT_KINDS)
    assert report.ok
