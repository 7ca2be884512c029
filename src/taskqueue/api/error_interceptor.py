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


class _Undecodable:
    """Stands in for a request whose bytes are not a valid message (e.g. strings that are not UTF-8)."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _safe(deserialize: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    # gRPC answers INTERNAL when a deserializer raises; a malformed request is the client's error.
    if deserialize is None:
        return None

    def safe(data: bytes) -> Any:
        try:
            return deserialize(data)
        except Exception as e:
            return _Undecodable(e)

    return safe


def _guard(method: str, inner: Handler) -> Handler:
    async def guarded(request: Any, context: aio.ServicerContext[Any, Any]) -> Any:
        if isinstance(request, _Undecodable):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the request is not a valid {method.rsplit('/', 1)[-1]} message: {request.error}",
            )
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
    def __init__(self) -> None:
        # Wrapped once per method, not once per call: the interceptor runs on every RPC.
        self._wrapped: dict[str, MethodHandler] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[MethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> MethodHandler | None:
        method = handler_call_details.method
        if method in self._wrapped:
            return self._wrapped[method]
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler  # streaming services (reflection) and unknown methods pass through
        # Our servicers are coroutines: the unary handler of an aio server is awaitable.
        inner = cast(Handler, handler.unary_unary)
        wrapped = grpc.unary_unary_rpc_method_handler(
            _guard(method, inner),
            request_deserializer=_safe(handler.request_deserializer),
            response_serializer=handler.response_serializer,
        )
        self._wrapped[method] = wrapped
        return wrapped
