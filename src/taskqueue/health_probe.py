"""`taskqueue health`: ask a server's grpc.health.v1 service how it is, for people and probes."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def check_health(address: str, timeout: float = 5.0) -> str:
    """SERVING, NOT_SERVING, ... or UNREACHABLE (with the reason)."""
    with grpc.insecure_channel(address) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=timeout
            )
        except grpc.RpcError as e:
            return f"UNREACHABLE ({e.code().name}: {e.details()})"
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))
