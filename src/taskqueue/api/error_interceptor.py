"""Turns exceptions into gRPC statuses in one place: our errors keep their message, anything
else is logged with its traceback and reaches the client only as a short INTERNAL."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias, cast

import grpc
from grpc import aio

from taskqueue.api.status_codes import status_code_for
from taskqueue.errors import TaskQueueError

log = logging.getLogger(__name__)

Handler = Callable[[Any, aio.ServicerContext[Any, Any]], Awaitable[Any]]


def _guard(method: str, inner: Handler) -> Handler:
    async def guarded(request: Any, context: aio.ServicerContext[Any, Any]) -> Any:
        try:
            return await inner(request, context)
        except TaskQueueError as e:
            await context.abort(status_code_for(e), str(e))
        except aio.AbortError:
            raise
        except Exception:
            log.exception("unexpected error in %s", method)
            await context.abort(
                grpc.StatusCode.INTERNAL, f"internal error in {method}; the server log has details"
            )

    return guarded


# Generic only in the type stubs, hence the string.
MethodHandler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"


class ErrorInterceptor(aio.ServerInterceptor):
    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[MethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> MethodHandler | None:
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler  # streaming services (reflection) and unknown methods pass through
        # Our servicers are coroutines: the unary handler of an aio server is awaitable.
        inner = cast(Handler, handler.unary_unary)
        return grpc.unary_unary_rpc_method_handler(
            _guard(handler_call_details.method, inner),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
