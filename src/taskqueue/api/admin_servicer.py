"""The Admin gRPC service for operators (the CLI's backend)."""

from __future__ import annotations

from typing import Any

from grpc import aio

from taskqueue.admin import Admin
from taskqueue.api import proto_conversion as out
from taskqueue.api import request_validation as check
from taskqueue.config import Limits
from taskqueue.domain import FINISHED_STATUSES, TaskFilter, TaskStatus
from taskqueue.errors import InvalidArgument
from taskqueue_proto.v1 import admin_pb2 as pb
from taskqueue_proto.v1 import admin_pb2_grpc as pb_grpc

Context = aio.ServicerContext[Any, Any]

# A dry run or a bulk requeue lists at most this many ids in its answer (the count is exact).
_MAX_IDS_IN_ANSWER = 1000


class AdminServicer(pb_grpc.AdminServicer):
    def __init__(self, admin: Admin, limits: Limits) -> None:
        self._admin = admin
        self._limits = limits

    async def ListTasks(self, request: pb.ListTasksRequest, context: Context) -> pb.ListTasksResponse:
        page = await self._admin.list_tasks(
            check.task_filter(request.filter, self._limits),
            check.page_size(request.page_size),
            check.page_token(request.page_token),
        )
        return pb.ListTasksResponse(
            tasks=[out.task(t) for t in page.tasks],
            next_page_token=check.encode_page_token(page.next_cursor),
        )

    async def RequeueDead(self, request: pb.RequeueDeadRequest, context: Context) -> pb.RequeueDeadResponse:
        task_filter = check.task_filter(request.filter, self._limits)
        if task_filter.status not in (None, TaskStatus.DEAD):
            raise InvalidArgument("filter.status must be unset or DEAD: only dead tasks are requeued")
        if request.limit < 0:
            raise InvalidArgument(f"limit is {request.limit}; it must be 0 (no limit) or more")
        has_filter = task_filter != TaskFilter(status=task_filter.status)
        if request.task_ids and has_filter:
            raise InvalidArgument("give either task_ids or filter, not both")
        ids = check.requeue_ids(request.task_ids, self._limits) if request.task_ids else None
        requeued = await self._admin.requeue_dead(ids, task_filter, request.limit or None, request.dry_run)
        return pb.RequeueDeadResponse(count=len(requeued), task_ids=requeued[:_MAX_IDS_IN_ANSWER])

    async def PurgeTasks(self, request: pb.PurgeTasksRequest, context: Context) -> pb.PurgeTasksResponse:
        task_filter = check.task_filter(request.filter, self._limits)
        if task_filter.status not in FINISHED_STATUSES:
            raise InvalidArgument(
                "filter.status must be SUCCEEDED, DEAD or CANCELLED: only finished tasks are purged"
            )
        return pb.PurgeTasksResponse(count=await self._admin.purge(task_filter, request.dry_run))

    async def QueueStats(self, request: pb.QueueStatsRequest, context: Context) -> pb.QueueStatsResponse:
        queue = check.name(request.queue, "queue", self._limits) if request.queue else None
        stats = await self._admin.queue_stats(queue)
        return pb.QueueStatsResponse(queues=[out.queue_stats(s) for s in stats])
