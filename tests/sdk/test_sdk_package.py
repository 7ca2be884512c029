"""The SDK stands alone: deliberate exports, no server or database driver, a test helper."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import taskqueue_sdk
from taskqueue_sdk import Permanent
from taskqueue_sdk.testing import run_task


def test_public_names_are_explicit_and_exist() -> None:
    assert sorted(taskqueue_sdk.__all__) == taskqueue_sdk.__all__
    for name in taskqueue_sdk.__all__:
        assert hasattr(taskqueue_sdk, name), name


def test_importing_the_sdk_loads_neither_the_server_nor_psycopg() -> None:
    code = (
        "import sys, taskqueue_sdk, taskqueue_sdk.worker_cli, taskqueue_sdk.testing;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('taskqueue', 'psycopg', 'psycopg_pool'));"
        "print(bad); raise SystemExit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_run_task_runs_handlers_without_a_server() -> None:
    def double(payload: int) -> int:
        return payload * 2

    async def shout(payload: dict[str, str], ctx: object) -> str:
        await asyncio.sleep(0)
        return payload["text"].upper()

    def broken(payload: None) -> None:
        raise Permanent("cannot ever work")

    def flaky(payload: None) -> None:
        raise ConnectionError("try again")

    assert run_task(double, 21).result == 42
    assert run_task(shout, {"text": "hi"}).result == "HI"
    permanent = run_task(broken)
    assert (permanent.succeeded, permanent.permanent, permanent.error) == (
        False,
        True,
        "taskqueue_sdk.errors.Permanent: cannot ever work",
    )
    retryable = run_task(flaky)
    assert (retryable.succeeded, retryable.permanent, retryable.error) == (
        False,
        False,
        "ConnectionError: try again",
    )
