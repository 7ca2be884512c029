"""The Admin service: listing with paging, requeueing dead letters, purging, queue stats."""

from __future__ import annotations

from datetime import timedelta

from taskqueue_proto.v1 import admin_pb2 as admin_pb
from taskqueue_proto.v1 import taskqueue_pb2 as pb
from tests.support.calls import complete, enqueue, fail, get, lease, new_task, seconds
from tests.support.clock import ShiftedClock
from tests.support.server import InProcessServer


def _make_dead(server: InProcessServer, queue: str, type: str, error: str, n: int) -> list[str]:
    ids = enqueue(server.tasks, *[new_task(queue=queue, type=type, payload=i) for i in range(n)])
    leased = lease(server.tasks, queue, max_tasks=n)
    for t in leased:
        fail(server.tasks, t, error=error, permanent=True)
    return ids


def test_list_pages_newest_first_with_filters(server: InProcessServer) -> None:
    ids = enqueue(server.tasks, *[new_task(queue="mail", payload=i) for i in range(7)])
    enqueue(server.tasks, new_task(queue="other"))
    seen: list[str] = []
    token = ""
    while True:
        page = server.admin.ListTasks(
            admin_pb.ListTasksRequest(filter=admin_pb.TaskFilter(queue="mail"), page_size=3, page_token=token)
        )
        seen += [t.id for t in page.tasks]
        token = page.next_page_token
        if not token:
            break
    assert seen == list(reversed(ids))


def test_list_by_status_distinguishes_scheduled_from_queued(server: InProcessServer) -> None:
    [now_id] = enqueue(server.tasks, new_task())
    [later_id] = enqueue(server.tasks, new_task(delay=seconds(600)))

    def listed(status: int) -> list[str]:
        req = admin_pb.ListTasksRequest(filter=admin_pb.TaskFilter(status=status))
        return [t.id for t in server.admin.ListTasks(req).tasks]

    assert listed(pb.TASK_STATUS_QUEUED) == [now_id]
    assert listed(pb.TASK_STATUS_SCHEDULED) == [later_id]


def test_requeue_dead_by_id_gives_a_fresh_budget(server: InProcessServer) -> None:
    [task_id] = _make_dead(server, "q", "t", "boom", 1)
    reply = server.admin.RequeueDead(admin_pb.RequeueDeadRequest(task_ids=[task_id]))
    assert (reply.count, list(reply.task_ids)) == (1, [task_id])
    task = get(server.tasks, task_id)
    assert (task.status, task.attempts) == (pb.TASK_STATUS_QUEUED, 0)
    [t] = lease(server.tasks, "q")
    assert complete(server.tasks, t).status.code == 0
    history = get(server.tasks, task_id).history
    assert [a.outcome for a in history] == ["failed", "succeeded"]


def test_requeue_by_filter_moves_exactly_the_matching_tasks_and_dry_run_changes_nothing(
    server: InProcessServer,
) -> None:
    target = _make_dead(server, "q", "resize", "timeout talking to S3", 3)
    other_type = _make_dead(server, "q", "email", "timeout talking to S3", 2)
    other_error = _make_dead(server, "q", "resize", "bad image", 2)

    flt = admin_pb.TaskFilter(queue="q", type="resize", error_contains="TIMEOUT")
    dry = server.admin.RequeueDead(admin_pb.RequeueDeadRequest(filter=flt, dry_run=True))
    assert dry.count == 3 and set(dry.task_ids) == set(target)
    assert all(get(server.tasks, i).status == pb.TASK_STATUS_DEAD for i in target)

    done = server.admin.RequeueDead(admin_pb.RequeueDeadRequest(filter=flt))
    assert set(done.task_ids) == set(target)
    assert all(get(server.tasks, i).status == pb.TASK_STATUS_QUEUED for i in target)
    assert all(get(server.tasks, i).status == pb.TASK_STATUS_DEAD for i in other_type + other_error)


def test_requeue_by_id_skips_tasks_that_are_not_dead(server: InProcessServer) -> None:
    [alive] = enqueue(server.tasks, new_task())
    reply = server.admin.RequeueDead(admin_pb.RequeueDeadRequest(task_ids=[alive]))
    assert reply.count == 0


def test_purge_deletes_only_matching_finished_tasks(server: InProcessServer) -> None:
    dead = _make_dead(server, "q", "t", "x", 2)
    [alive] = enqueue(server.tasks, new_task(queue="q"))
    flt = admin_pb.TaskFilter(queue="q", status=pb.TASK_STATUS_DEAD)
    assert server.admin.PurgeTasks(admin_pb.PurgeTasksRequest(filter=flt, dry_run=True)).count == 2
    assert get(server.tasks, dead[0]).status == pb.TASK_STATUS_DEAD
    assert server.admin.PurgeTasks(admin_pb.PurgeTasksRequest(filter=flt)).count == 2
    listed = server.admin.ListTasks(admin_pb.ListTasksRequest(filter=admin_pb.TaskFilter(queue="q"))).tasks
    assert [t.id for t in listed] == [alive]


def test_queue_stats_counts_by_status_and_oldest_ready_age(
    server: InProcessServer, clock: ShiftedClock
) -> None:
    enqueue(server.tasks, *[new_task(queue="a") for _ in range(3)])
    enqueue(server.tasks, new_task(queue="a", delay=seconds(600)))
    _make_dead(server, "b", "t", "x", 1)
    [t] = lease(server.tasks, "a")
    clock.advance(timedelta(seconds=30))
    stats = {s.queue: s for s in server.admin.QueueStats(admin_pb.QueueStatsRequest()).queues}
    a, b = stats["a"], stats["b"]
    assert (a.queued, a.scheduled, a.leased, a.dead) == (2, 1, 1, 0)
    assert a.oldest_ready_age.ToTimedelta() >= timedelta(seconds=30)
    assert (b.queued, b.dead) == (0, 1)
    only_b = server.admin.QueueStats(admin_pb.QueueStatsRequest(queue="b")).queues
    assert [s.queue for s in only_b] == ["b"]
    assert t.queue == "a"
