"""`taskq`: the operator command line. Parses flags, runs one command, maps errors to exit codes.

Errors are one line on stderr, never a traceback."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence

import grpc

from taskqueue_cli import commands, exit_codes
from taskqueue_cli.connection import Server, add_connection_flags, connect
from taskqueue_cli.formatting import STATUS_BY_NAME
from taskqueue_cli.task_filters import add_filter_flags, point_in_time

Command = Callable[[Server, argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # One line, and the documented exit code for invalid usage.
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(exit_codes.USAGE)


def build_parser(env: Mapping[str, str]) -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON instead of tables")
    add_connection_flags(common, env)

    parser = _Parser(
        prog="taskq",
        description="Operate a taskqueue server: dead letters, tasks, queues.",
        epilog=exit_codes.HELP,
    )
    groups = parser.add_subparsers(dest="group", required=True, parser_class=_Parser)

    def leaf(sub: argparse._SubParsersAction[_Parser], name: str, command: Command, help: str) -> _Parser:
        p = sub.add_parser(name, parents=[common], help=help, description=help, epilog=exit_codes.HELP)
        p.set_defaults(command=command)
        return p

    dead = groups.add_parser("dead", help="dead letters: list, show, requeue, purge").add_subparsers(
        dest="action", required=True, parser_class=_Parser
    )
    p = leaf(dead, "list", commands.dead_list, "list dead tasks, newest first")
    add_filter_flags(p)
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    p = leaf(dead, "show", commands.task_get, "show a task: payload and every attempt")
    p.add_argument("id")
    p = leaf(dead, "requeue", commands.dead_requeue, "send dead tasks back to their queue (fresh attempts)")
    p.add_argument("ids", nargs="*", metavar="ID", help="task ids; or use filter flags for bulk")
    add_filter_flags(p)
    p.add_argument("--all", action="store_true", help="every dead task (bulk)")
    p.add_argument("--dry-run", action="store_true", help="say how many and which, change nothing")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p = leaf(dead, "purge", commands.dead_purge, "delete dead tasks for good")
    add_filter_flags(p)
    p.add_argument("--all", action="store_true", help="every dead task")
    p.add_argument("--dry-run", action="store_true", help="say how many, change nothing")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")

    task = groups.add_parser("task", help="tasks: get, cancel, list").add_subparsers(
        dest="action", required=True, parser_class=_Parser
    )
    p = leaf(task, "get", commands.task_get, "show a task with its attempts")
    p.add_argument("id")
    p = leaf(task, "cancel", commands.task_cancel, "cancel a queued task, or ask its worker to stop")
    p.add_argument("id")
    p = leaf(task, "list", commands.task_list, "list tasks, newest first")
    add_filter_flags(p)
    p.add_argument("--status", choices=sorted(STATUS_BY_NAME), help="only tasks in this status")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")

    p = leaf(groups, "enqueue", commands.enqueue, "enqueue a task")
    p.add_argument("type", help="task type")
    p.add_argument("payload", nargs="?", help="JSON payload (or use --file)")
    p.add_argument("--file", help="read the JSON payload from this file ('-' for stdin)")
    p.add_argument("--queue", default="default", help="queue (default: default)")
    p.add_argument("--priority", type=int, default=0, help="higher runs first (default 0)")
    p.add_argument("--delay", type=float, help="seconds to wait before it may run")
    p.add_argument("--run-at", type=point_in_time, help="ISO time at which it may run")
    p.add_argument("--max-attempts", type=int, help="attempts before it is dead (default: server's)")
    p.add_argument("--task-timeout", type=float, help="seconds one attempt may run")
    p.add_argument("--idempotency-key", help="enqueue at most once per queue with this key")
    p.add_argument("--backoff-base", type=float, help="retry backoff base, seconds")
    p.add_argument("--backoff-cap", type=float, help="retry backoff cap, seconds")

    p = leaf(groups, "queues", commands.queues, "per-queue counts and the oldest ready task's age")
    p.add_argument("--queue", help="only this queue")
    return parser


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    parser = build_parser(os.environ if env is None else env)
    args = parser.parse_args(argv)
    if getattr(args, "limit", 1) < 1:
        parser.error("--limit must be at least 1")
    try:
        server = connect(args)
    except OSError as e:
        print(f"taskq: error: {e}", file=sys.stderr)
        return exit_codes.USAGE
    try:
        code: int = args.command(server, args)
        return code
    except grpc.RpcError as e:
        status = e.code() if hasattr(e, "code") else grpc.StatusCode.UNKNOWN
        details = e.details() if hasattr(e, "details") else str(e)
        if status in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            details = f"cannot reach the server at {args.address} ({status.name.lower()}: {details})"
        print(f"taskq: error: {' '.join(str(details).split())}", file=sys.stderr)
        return exit_codes.for_status(status)
    except (argparse.ArgumentTypeError, OSError) as e:
        print(f"taskq: error: {e}", file=sys.stderr)
        return exit_codes.USAGE
    except KeyboardInterrupt:
        print("taskq: interrupted", file=sys.stderr)
        return 130
    finally:
        server.close()
