"""The taskq commands: each takes the server and the parsed flags and returns an exit code."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from taskqueue_cli import exit_codes
from taskqueue_cli.connection import Server
from taskqueue_cli.formatting import (
    STATUS_BY_NAME,
    STATUS_NAMES,
    human_duration,
    one_line,
    optional_when,
    print_json,
    queue_json,
    table,
    task_detail,
    task_json,
)
from taskqueue_cli.task_filters import task_filter
from taskqueue_proto.v1 import admin_pb2 as admin_pb
from taskqueue_proto.v1 import taskqueue_pb2 as pb

_BULK_STEP = 500  # tasks per RequeueDead call in a bulk requeue, so progress can be shown


def _list(server: Server, flt: admin_pb.TaskFilter, limit: int) -> Iterator[pb.Task]:
    token = ""
    seen = 0
    while seen < limit:
        page = server.admin.ListTasks(
            admin_pb.ListTasksRequest(filter=flt, page_size=min(limit - seen, 1000), page_token=token),
            timeout=server.timeout,
        )
        yield from page.tasks
        seen += len(page.tasks)
        token = page.next_page_token
        if not token:
            return


def task_list(server: Server, args: argparse.Namespace) -> int:
    status = STATUS_BY_NAME[args.status] if args.status else pb.TASK_STATUS_UNSPECIFIED
    tasks = list(_list(server, task_filter(args, status), args.limit))
    if args.json:
        print_json([task_json(t) for t in tasks])
        return exit_codes.OK
    table(
        ["ID", "QUEUE", "TYPE", "STATUS", "ATTEMPTS", "CREATED", "LAST ERROR"],
        [
            [t.id, t.queue, t.type, STATUS_NAMES.get(t.status, "?"), f"{t.attempts}/{t.max_attempts}",
             optional_when(t, "created_at"), one_line(t.last_error, 60)]
            for t in tasks
        ],
    )  # fmt: skip
    return exit_codes.OK


def dead_list(server: Server, args: argparse.Namespace) -> int:
    tasks = list(_list(server, task_filter(args, pb.TASK_STATUS_DEAD), args.limit))
    if args.json:
        print_json([task_json(t) for t in tasks])
        return exit_codes.OK
    table(
        ["ID", "QUEUE", "TYPE", "ATTEMPTS", "DIED", "ERROR"],
        [
            [
                t.id,
                t.queue,
                t.type,
                str(t.attempts),
                optional_when(t, "finished_at"),
                one_line(t.last_error, 70),
            ]
            for t in tasks
        ],
    )
    if not tasks:
        print("no dead tasks match", file=sys.stderr)
    return exit_codes.OK


def task_get(server: Server, args: argparse.Namespace) -> int:
    task = server.tasks.GetTask(pb.GetTaskRequest(task_id=args.id), timeout=server.timeout)
    if args.json:
        print_json(task_json(task))
    else:
        task_detail(task)
    return exit_codes.OK


def task_cancel(server: Server, args: argparse.Namespace) -> int:
    task = server.tasks.CancelTask(pb.CancelTaskRequest(task_id=args.id), timeout=server.timeout)
    if args.json:
        print_json(task_json(task))
    elif task.status == pb.TASK_STATUS_CANCELLED:
        print(f"cancelled {task.id}")
    else:
        print(f"cancel requested for {task.id}: its worker stops it at the next heartbeat")
    return exit_codes.OK


def queues(server: Server, args: argparse.Namespace) -> int:
    stats = server.admin.QueueStats(
        admin_pb.QueueStatsRequest(queue=args.queue or ""), timeout=server.timeout
    )
    if args.json:
        print_json([queue_json(q) for q in stats.queues])
        return exit_codes.OK
    table(
        ["QUEUE", "READY", "SCHEDULED", "LEASED", "SUCCEEDED", "DEAD", "CANCELLED", "OLDEST READY"],
        [
            [q.queue, str(q.queued), str(q.scheduled), str(q.leased), str(q.succeeded), str(q.dead),
             str(q.cancelled),
             human_duration(q.oldest_ready_age.seconds + q.oldest_ready_age.nanos / 1e9)
             if q.HasField("oldest_ready_age") else "-"]
            for q in stats.queues
        ],
    )  # fmt: skip
    return exit_codes.OK


def _confirm(question: str, assume_yes: bool) -> bool:
    if assume_yes:
        return True
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def _progress(done: int, total: int) -> None:
    if not sys.stderr.isatty() or total == 0:
        return
    width = 30
    filled = width * done // total
    print(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end="", file=sys.stderr, flush=True)
    if done >= total:
        print(file=sys.stderr)


def dead_requeue(server: Server, args: argparse.Namespace) -> int:
    if args.ids and any(getattr(args, f) for f in ("queue", "type", "error", "since", "before")):
        print("taskq: error: give task ids or filter flags, not both", file=sys.stderr)
        return exit_codes.USAGE
    if args.ids:
        return _requeue_ids(server, args)
    if not any(getattr(args, f) for f in ("queue", "type", "error", "since", "before", "all")):
        print("taskq: error: give task ids, filter flags (--queue, --type, ...) or --all", file=sys.stderr)
        return exit_codes.USAGE
    flt = task_filter(args)
    preview = server.admin.RequeueDead(
        admin_pb.RequeueDeadRequest(filter=flt, dry_run=True), timeout=server.timeout
    )
    if args.dry_run:
        if args.json:
            print_json({"dry_run": True, "count": preview.count, "task_ids": list(preview.task_ids)})
        else:
            print(f"would requeue {preview.count} dead tasks (dry run, nothing changed)")
            for task_id in preview.task_ids:
                print(f"  {task_id}")
        return exit_codes.OK
    if preview.count == 0:
        print("no dead tasks match", file=sys.stderr)
        return exit_codes.OK
    if not _confirm(f"Requeue {preview.count} dead tasks?", args.yes):
        print("taskq: aborted, nothing requeued", file=sys.stderr)
        return exit_codes.ABORTED
    done = 0
    requeued: list[str] = []
    while done < preview.count:
        step = server.admin.RequeueDead(
            admin_pb.RequeueDeadRequest(filter=flt, limit=min(_BULK_STEP, preview.count - done)),
            timeout=server.timeout,
        )
        if step.count == 0:
            break
        done += step.count
        requeued += step.task_ids
        _progress(done, preview.count)
    if args.json:
        print_json({"dry_run": False, "count": done, "task_ids": requeued})
    else:
        print(f"requeued {done} dead tasks")
    return exit_codes.OK


def _requeue_ids(server: Server, args: argparse.Namespace) -> int:
    reply = server.admin.RequeueDead(admin_pb.RequeueDeadRequest(task_ids=args.ids), timeout=server.timeout)
    requeued = set(reply.task_ids)
    code = exit_codes.OK
    problems = []
    for task_id in args.ids:
        if task_id in requeued:
            continue
        try:
            task = server.tasks.GetTask(pb.GetTaskRequest(task_id=task_id), timeout=server.timeout)
            problems.append(f"{task_id} is {STATUS_NAMES.get(task.status, '?')}, not dead: not requeued")
            code = max(code, exit_codes.CONFLICT) if code != exit_codes.NOT_FOUND else code
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.NOT_FOUND:
                raise
            problems.append(f"no task {task_id}")
            code = exit_codes.NOT_FOUND
    if args.json:
        print_json({"count": len(requeued), "task_ids": sorted(requeued), "problems": problems})
    else:
        for task_id in args.ids:
            if task_id in requeued:
                print(f"requeued {task_id}")
    for problem in problems:
        print(f"taskq: {problem}", file=sys.stderr)
    return code


def dead_purge(server: Server, args: argparse.Namespace) -> int:
    if not any(getattr(args, f) for f in ("queue", "type", "error", "since", "before", "all")):
        print("taskq: error: give filter flags (--queue, --type, --before, ...) or --all", file=sys.stderr)
        return exit_codes.USAGE
    flt = task_filter(args, pb.TASK_STATUS_DEAD)
    preview = server.admin.PurgeTasks(
        admin_pb.PurgeTasksRequest(filter=flt, dry_run=True), timeout=server.timeout
    )
    if args.dry_run:
        if args.json:
            print_json({"dry_run": True, "count": preview.count})
        else:
            print(f"would delete {preview.count} dead tasks (dry run, nothing changed)")
        return exit_codes.OK
    if preview.count == 0:
        print("no dead tasks match", file=sys.stderr)
        return exit_codes.OK
    if not _confirm(f"Delete {preview.count} dead tasks and their history for good?", args.yes):
        print("taskq: aborted, nothing deleted", file=sys.stderr)
        return exit_codes.ABORTED
    gone = server.admin.PurgeTasks(admin_pb.PurgeTasksRequest(filter=flt), timeout=server.timeout)
    if args.json:
        print_json({"dry_run": False, "count": gone.count})
    else:
        print(f"deleted {gone.count} dead tasks")
    return exit_codes.OK


def _payload(args: argparse.Namespace) -> bytes | None:
    """The payload bytes, or None after printing why they are not JSON."""
    if args.payload is not None and args.file is not None:
        raise argparse.ArgumentTypeError("give the payload as an argument or with --file, not both")
    if args.file == "-":
        text = sys.stdin.read()
    elif args.file is not None:
        text = Path(args.file).read_text(encoding="utf-8")
    else:
        text = args.payload if args.payload is not None else "null"
    try:
        json.loads(text)
    except ValueError as e:
        print(f"taskq: error: the payload is not valid JSON: {e}", file=sys.stderr)
        return None
    return text.encode()


def enqueue(server: Server, args: argparse.Namespace) -> int:
    payload = _payload(args)
    if payload is None:
        return exit_codes.USAGE
    task = pb.NewTask(
        queue=args.queue,
        type=args.type,
        payload=payload,
        priority=args.priority,
        max_attempts=args.max_attempts or 0,
        idempotency_key=args.idempotency_key or "",
    )
    for field, flag in (("delay", "delay"), ("timeout", "task_timeout"), ("backoff_base", "backoff_base"),
                        ("backoff_cap", "backoff_cap")):  # fmt: skip
        value = getattr(args, flag)
        if value is not None:
            getattr(task, field).CopyFrom(Duration(seconds=int(value), nanos=int((value % 1) * 1e9)))
    if args.run_at is not None:
        ts = Timestamp()
        ts.FromDatetime(args.run_at)
        task.run_at.CopyFrom(ts)
    [result] = server.tasks.Enqueue(pb.EnqueueRequest(tasks=[task]), timeout=server.timeout).results
    if result.status.code != 0:
        print(f"taskq: error: {result.status.message}", file=sys.stderr)
        return exit_codes.for_status(result.status.code)
    if args.json:
        print_json({"task_id": result.task_id, "created": result.created})
    else:
        print(result.task_id if result.created else f"{result.task_id} (already enqueued with this key)")
    return exit_codes.OK
