"""Concurrent enqueue calls of one client share Enqueue RPCs.

While one RPC is in flight, the calls that arrive wait together and go in the next RPC, so a
hundred coroutines each enqueueing one task cost a few RPCs rather than a hundred; a call that finds
nothing in flight goes at once, so nothing waits on purpose. A merged RPC that the server rejects
as invalid is sent again call by call, so one bad task never fails its neighbours' calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from taskqueue_proto.v1 import taskqueue_pb2 as pb
from taskqueue_sdk.errors import InvalidRequest

Send = Callable[[list[pb.NewTask]], Awaitable[list[pb.EnqueueResult]]]
_Waiting = tuple[list[pb.NewTask], "asyncio.Future[list[pb.EnqueueResult]]"]


class EnqueueCoalescer:
    def __init__(self, send: Send, max_batch: int = 1000) -> None:
        self._send = send
        self._max_batch = max_batch  # the server's limit per Enqueue
        self._waiting: list[_Waiting] = []
        self._sending = False

    async def enqueue(self, tasks: list[pb.NewTask]) -> list[pb.EnqueueResult]:
        future: asyncio.Future[list[pb.EnqueueResult]] = asyncio.get_running_loop().create_future()
        self._waiting.append((tasks, future))
        if not self._sending:
            self._sending = True
            asyncio.get_running_loop().create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        try:
            while self._waiting:
                group: list[_Waiting] = []
                size = 0
                while self._waiting and (not group or size + len(self._waiting[0][0]) <= self._max_batch):
                    group.append(self._waiting.pop(0))
                    size += len(group[-1][0])
                await self._send_group(group)
        finally:
            self._sending = False

    async def _send_group(self, group: list[_Waiting]) -> None:
        try:
            results = await self._send([task for tasks, _ in group for task in tasks])
        except InvalidRequest as e:
            if len(group) == 1:
                _settle(group[0][1], error=e)
            else:  # find out whose task it was: each call on its own, its own error message
                for one in group:
                    await self._send_group([one])
            return
        except Exception as e:
            for _, future in group:
                _settle(future, error=e)
            return
        start = 0
        for tasks, future in group:
            _settle(future, results[start : start + len(tasks)])
            start += len(tasks)


def _settle(
    future: asyncio.Future[list[pb.EnqueueResult]],
    results: list[pb.EnqueueResult] | None = None,
    error: BaseException | None = None,
) -> None:
    if future.done():  # the caller went away (cancelled)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(results or [])
