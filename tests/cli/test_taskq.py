"""`taskq` run as a subprocess against a real server process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from tests.support.calls import complete, enqueue, fail, lease, new_task, seconds
from tests.support.databases import DatabaseFactory
from tests.support.server import ServerProcess

TASKQ = str(Path(sys.executable).parent / "taskq")


@pytest.fixture(scope="module")
def server(databases: DatabaseFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(databases.clone_migrated())
    process.wait_serving()
    yield process
    process.stop()


@pytest.fixture(autouse=True)
def _empty(server: ServerProcess) -> None:
    assert server.database_url is not None
    with psycopg.connect(server.database_url, autocommit=True) as conn:
        conn.execute("TRUNCATE tasks, task_attempts")


def taskq(server: ServerProcess, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKQUEUE_")}
    env["TASKQUEUE_ADDRESS"] = server.address
    return subprocess.run(
        [TASKQ, *args], env=env, input=stdin or "", capture_output=True, text=True, timeout=60
    )


def make_dead(server: ServerProcess, queue: str, type: str, error: str, n: int) -> list[str]:
    """n tasks that fail both of their two attempts."""
    ids = enqueue(
        server.tasks,
        *[
            new_task(queue=queue, type=type, payload={"n": i}, max_attempts=2,
                     backoff_base=seconds(0.001), backoff_cap=seconds(0.002))
            for i in range(n)
        ],
    )  # fmt: skip
    for _ in range(2):
        leased: list[pb.LeasedTask] = []
        while len(leased) < n:
            leased += lease(server.tasks, queue, worker="worker-7", max_tasks=n, wait=1, types=(type,))
        for t in leased:
            fail(server.tasks, t, error=f"{error} (attempt {t.attempt})")
    return ids


def test_dead_tasks_are_listed_shown_requeued_and_then_completed(server: ServerProcess) -> None:
    ids = make_dead(server, "mail", "send", "SMTP timeout", 3)

    listed = taskq(server, "dead", "list")
    assert listed.returncode == 0, listed.stderr
    for task_id in ids:
        assert task_id in listed.stdout
    assert "SMTP timeout (attempt 2)" in listed.stdout
    assert listed.stdout.splitlines()[0].split() == ["ID", "QUEUE", "TYPE", "ATTEMPTS", "DIED", "ERROR"]

    shown = taskq(server, "dead", "show", ids[0])
    assert shown.returncode == 0, shown.stderr
    assert "Status      dead" in shown.stdout
    assert '{"n": 0}' in shown.stdout
    attempts = shown.stdout.split("\nAttempts\n")[1].splitlines()[1:]
    assert len(attempts) == 2
    assert all("worker-7" in line and "failed" in line for line in attempts)
    assert "SMTP timeout (attempt 1)" in attempts[0] and "SMTP timeout (attempt 2)" in attempts[1]

    requeued = taskq(server, "dead", "requeue", ids[0])
    assert (requeued.returncode, requeued.stdout.strip()) == (0, f"requeued {ids[0]}")
    [t] = lease(server.tasks, "mail", wait=1)
    assert t.task_id == ids[0] and t.attempt == 1
    assert complete(server.tasks, t, "sent").status.code == 0
    final = json.loads(taskq(server, "task", "get", ids[0], "--json").stdout)
    assert final["status"] == "succeeded"
    assert [h["outcome"] for h in final["history"]] == ["failed", "failed", "succeeded"]


def _statuses(server: ServerProcess) -> dict[str, str]:
    listed = json.loads(taskq(server, "task", "list", "--json", "--limit", "100").stdout)
    return {t["id"]: t["status"] for t in listed}


def test_bulk_requeue_by_filter_moves_exactly_the_matching_tasks(server: ServerProcess) -> None:
    target = make_dead(server, "a", "x", "boom", 3)
    other_type = make_dead(server, "a", "y", "boom", 2)
    other_queue = make_dead(server, "b", "x", "boom", 2)
    before = _statuses(server)

    dry = taskq(server, "dead", "requeue", "--queue", "a", "--type", "x", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would requeue 3 dead tasks" in dry.stdout
    assert sorted(line.strip() for line in dry.stdout.splitlines()[1:]) == sorted(target)
    assert _statuses(server) == before  # the dry run changed nothing

    refused = taskq(server, "dead", "requeue", "--queue", "a", "--type", "x", stdin="n\n")
    assert refused.returncode == 6 and "Requeue 3 dead tasks?" in refused.stderr
    assert _statuses(server) == before

    done = taskq(server, "dead", "requeue", "--queue", "a", "--type", "x", "--yes")
    assert (done.returncode, done.stdout.strip()) == (0, "requeued 3 dead tasks")
    after = _statuses(server)
    assert {i: after[i] for i in target} == dict.fromkeys(target, "queued")
    assert {after[i] for i in other_type + other_queue} == {"dead"}


def test_purge_is_guarded(server: ServerProcess) -> None:
    make_dead(server, "p", "x", "boom", 2)
    dry = taskq(server, "dead", "purge", "--queue", "p", "--dry-run")
    assert "would delete 2 dead tasks" in dry.stdout
    assert taskq(server, "dead", "purge").returncode == 2  # no filter and no --all
    assert taskq(server, "dead", "purge", "--queue", "p", stdin="").returncode == 6
    gone = taskq(server, "dead", "purge", "--queue", "p", "--yes")
    assert gone.stdout.strip() == "deleted 2 dead tasks"
    assert json.loads(taskq(server, "dead", "list", "--json").stdout) == []


UNKNOWN = "0190a4b2-0000-7000-8000-0000000000ff"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["task", "get", UNKNOWN], 3, f"taskq: error: task {UNKNOWN} not found"),
        (["dead", "show", "not-a-uuid"], 2, "taskq: error: task_id 'not-a-uuid' is not a valid UUID"),
        (["dead", "requeue", UNKNOWN], 3, f"taskq: no task {UNKNOWN}"),
        (
            ["queues", "--address", "127.0.0.1:1", "--timeout", "1"],
            4,
            "taskq: error: cannot reach the server at 127.0.0.1:1",
        ),
        (["dead", "list", "--frobnicate"], 2, "taskq: error: unrecognized arguments: --frobnicate"),
        (
            ["task", "list", "--status", "sleeping"],
            2,
            "taskq task list: error: argument --status: invalid choice",
        ),
        (
            ["dead", "list", "--since", "yesterday"],
            2,
            "taskq dead list: error: argument --since: 'yesterday' is neither an age",
        ),
        (["enqueue", "t", "{not json"], 2, "taskq: error: the payload is not valid JSON"),
        (["enqueue", "t", "--queue", ""], 2, "taskq: error: tasks[0].queue is empty"),
    ],
)
def test_errors_are_one_line_with_the_documented_exit_code(
    server: ServerProcess, args: list[str], code: int, message: str
) -> None:
    done = taskq(server, *args)
    assert done.returncode == code, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(message), done.stderr
    assert "Traceback" not in done.stderr


def test_cancelling_a_finished_task_is_a_conflict(server: ServerProcess) -> None:
    [task_id] = enqueue(server.tasks, new_task())
    [t] = lease(server.tasks)
    complete(server.tasks, t)
    done = taskq(server, "task", "cancel", task_id)
    assert done.returncode == 5
    assert "already succeeded" in done.stderr


def test_json_output_parses_for_every_listing(server: ServerProcess) -> None:
    [dead] = make_dead(server, "j", "x", "boom", 1)
    enqueue(server.tasks, new_task(queue="j"))
    for args in (
        ["dead", "list"],
        ["dead", "show", dead],
        ["task", "list"],
        ["task", "list", "--status", "queued"],
        ["task", "get", dead],
        ["queues"],
        ["dead", "requeue", "--all", "--dry-run"],
    ):
        done = taskq(server, *args, "--json")
        assert done.returncode == 0, (args, done.stderr)
        parsed = json.loads(done.stdout)
        assert parsed, args
    [stats] = json.loads(taskq(server, "queues", "--json").stdout)
    assert (stats["queue"], stats["queued"], stats["dead"]) == ("j", 1, 1)


def test_enqueue_from_argument_file_and_stdin(server: ServerProcess, tmp_path: Path) -> None:
    payload_file = tmp_path / "payload.json"
    payload_file.write_text('{"from": "file"}')
    ids = [
        taskq(server, "enqueue", "job", '{"from": "arg"}', "--queue", "q", "--priority", "3").stdout.strip(),
        taskq(server, "enqueue", "job", "--file", str(payload_file), "--delay", "60").stdout.strip(),
        taskq(
            server, "enqueue", "job", "--file", "-", "--max-attempts", "2", stdin='{"from": "stdin"}'
        ).stdout.strip(),
    ]
    tasks = [json.loads(taskq(server, "task", "get", i, "--json").stdout) for i in ids]
    assert [t["payload"] for t in tasks] == [{"from": "arg"}, {"from": "file"}, {"from": "stdin"}]
    assert (tasks[0]["queue"], tasks[0]["priority"]) == ("q", 3)
    assert tasks[1]["status"] == "scheduled"
    assert tasks[2]["max_attempts"] == 2

    first = taskq(server, "enqueue", "job", "1", "--idempotency-key", "k")
    again = taskq(server, "enqueue", "job", "1", "--idempotency-key", "k")
    assert again.stdout.startswith(first.stdout.strip()) and "already enqueued" in again.stdout
    clash = taskq(server, "enqueue", "job", "2", "--idempotency-key", "k")
    assert clash.returncode == 5 and "different payload" in clash.stderr


def test_help_names_the_environment_fallbacks(server: ServerProcess) -> None:
    text = taskq(server, "dead", "list", "--help").stdout
    for name in ("TASKQUEUE_ADDRESS", "TASKQUEUE_TLS", "TASKQUEUE_TLS_CA_FILE", "TASKQUEUE_TIMEOUT"):
        assert name in text
    assert "exit codes:" in text


def test_the_cli_loads_neither_the_server_nor_the_sdk_nor_psycopg() -> None:
    code = (
        "import sys, taskqueue_cli.app;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('taskqueue', 'taskqueue_sdk', 'psycopg', 'psycopg_pool'));"
        "print(bad); raise SystemExit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
