"""The gRPC channel, and retrying transient UNAVAILABLE answers with jittered backoff."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc
from grpc import aio

from taskqueue_sdk.errors import from_rpc_error
from taskqueue_sdk.settings import ConnectionSettings

T = TypeVar("T")

_RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE})


def open_channel(settings: ConnectionSettings) -> aio.Channel:
    options = [
        ("grpc.max_receive_message_length", 64 * 1024 * 1024),
        ("grpc.max_send_message_length", 64 * 1024 * 1024),
        # Notice a dead server quickly, so long-polls and retries move on instead of hanging.
        ("grpc.keepalive_time_ms", 20_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
    ]
    if not settings.tls:
        return aio.insecure_channel(settings.address, options=options)
    root = settings.tls_ca_file.read_bytes() if settings.tls_ca_file else None
    return aio.secure_channel(settings.address, grpc.ssl_channel_credentials(root), options=options)


class Backoff:
    """Full-jitter exponential backoff: sleep uniform(0, min(cap, base * 2^n))."""

    def __init__(self, base: float = 0.05, cap: float = 5.0) -> None:
        self.base, self.cap, self.attempt = base, cap, 0

    def next_delay(self) -> float:
        delay = random.uniform(0, min(self.cap, self.base * 2**self.attempt))
        self.attempt = min(self.attempt + 1, 30)
        return delay

    def reset(self) -> None:
        self.attempt = 0


async def call_with_retry(
    call: Callable[[float], Awaitable[T]], settings: ConnectionSettings, retry: bool = True
) -> T:
    """Run call(timeout_left) until it succeeds, retrying UNAVAILABLE within settings.timeout.

    Raises the SDK's typed exception for the final status."""
    deadline = time.monotonic() + settings.timeout.total_seconds()
    backoff = Backoff()
    while True:
        left = deadline - time.monotonic()
        try:
            return await call(max(left, 0.001))
        except grpc.RpcError as e:
            code = e.code() if isinstance(e, aio.AioRpcError) else None
            left = deadline - time.monotonic()
            if not (retry and settings.retry_unavailable and code in _RETRYABLE) or left <= 0.001:
                raise from_rpc_error(e) from None
            # Use the whole budget: the last wait is cut short to end at the deadline.
            await asyncio.sleep(min(backoff.next_delay(), left))
