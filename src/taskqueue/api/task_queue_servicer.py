"""The TaskQueue gRPC service: validate, call the use case, convert the answer."""

from __future__ import annotations

from typing import Any

from grpc import aio

from taskqueue.api import proto_conversion as out
from taskqueue.api import request_validation as check
from taskqueue.config import Limits, TaskDefaults
from taskqueue.leasing import Leasing
from taskqueue.producing import Producing
from taskqueue.reporting import Reporting
from taskqueue_proto.v1 import taskqueue_pb2 as pb
from taskqueue_proto.v1 import taskqueue_pb2_grpc as pb_grpc

Context = aio.ServicerContext[Any, Any]


class TaskQueueServicer(pb_grpc.TaskQueueServicer):
    def __init__(
        self,
        producing: Producing,
        leasing: Leasing,
        reporting: Reporting,
        limits: Limits,
        defaults: TaskDefaults,
    ) -> None:
        self._producing = producing
        self._leasing = leasing
        self._reporting = reporting
        self._limits = limits
        self._defaults = defaults

    async def Enqueue(self, request: pb.EnqueueRequest, context: Context) -> pb.EnqueueResponse:
        tasks = check.enqueue(request, self._limits, self._defaults)
        outcomes = await self._producing.enqueue(tasks)
        return pb.EnqueueResponse(results=[out.enqueue_result(o) for o in outcomes])

    async def Lease(self, request: pb.LeaseRequest, context: Context) -> pb.LeaseResponse:
        order = check.lease(request, self._limits, self._defaults)
        tasks = await self._leasing.lease(order)
        return out.lease_response(tasks)

    async def Heartbeat(self, request: pb.HeartbeatRequest, context: Context) -> pb.HeartbeatResponse:
        refs, lease_duration = check.heartbeat(request, self._limits, self._defaults)
        outcomes = await self._leasing.heartbeat(refs, lease_duration)
        return pb.HeartbeatResponse(results=[out.heartbeat_result(o) for o in outcomes])

    async def Complete(self, request: pb.CompleteRequest, context: Context) -> pb.CompleteResponse:
        outcomes = await self._reporting.complete(check.complete(request, self._limits))
        return pb.CompleteResponse(results=[out.item_result(o) for o in outcomes])

    async def Fail(self, request: pb.FailRequest, context: Context) -> pb.FailResponse:
        outcomes = await self._reporting.fail(check.fail(request, self._limits))
        return pb.FailResponse(results=[out.fail_result(o) for o in outcomes])

    async def Release(self, request: pb.ReleaseRequest, context: Context) -> pb.ReleaseResponse:
        outcomes = await self._leasing.release(check.release(request, self._limits))
        return pb.ReleaseResponse(results=[out.item_result(o) for o in outcomes])

    async def GetTask(self, request: pb.GetTaskRequest, context: Context) -> pb.Task:
        return out.task(await self._producing.get(check.task_id(request.task_id, "task_id")))

    async def CancelTask(self, request: pb.CancelTaskRequest, context: Context) -> pb.Task:
        return out.task(await self._producing.cancel(check.task_id(request.task_id, "task_id")))
