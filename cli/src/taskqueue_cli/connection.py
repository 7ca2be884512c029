"""The gRPC channel to the server, from flags with TASKQUEUE_* fallbacks."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass

import grpc

from taskqueue_proto.v1 import admin_pb2_grpc, taskqueue_pb2_grpc


def add_connection_flags(parser: argparse.ArgumentParser, env: Mapping[str, str]) -> None:
    group = parser.add_argument_group("connection")
    group.add_argument(
        "--address",
        default=env.get("TASKQUEUE_ADDRESS", "127.0.0.1:50051"),
        help="server host:port [env TASKQUEUE_ADDRESS; default 127.0.0.1:50051]",
    )
    group.add_argument(
        "--tls",
        action="store_true",
        default=env.get("TASKQUEUE_TLS", "").lower() in ("1", "true", "yes"),
        help="use TLS [env TASKQUEUE_TLS=1]",
    )
    group.add_argument(
        "--tls-ca-file",
        default=env.get("TASKQUEUE_TLS_CA_FILE"),
        help="CA certificate(s) for TLS, PEM [env TASKQUEUE_TLS_CA_FILE; default: system roots]",
    )
    group.add_argument(
        "--timeout",
        type=float,
        default=float(env.get("TASKQUEUE_TIMEOUT", "10")),
        help="seconds per call [env TASKQUEUE_TIMEOUT; default 10]",
    )


@dataclass
class Server:
    tasks: taskqueue_pb2_grpc.TaskQueueStub
    admin: admin_pb2_grpc.AdminStub
    timeout: float
    channel: grpc.Channel

    def close(self) -> None:
        self.channel.close()


def connect(args: argparse.Namespace) -> Server:
    if args.tls or args.tls_ca_file:
        root = None
        if args.tls_ca_file:
            with open(os.path.expanduser(args.tls_ca_file), "rb") as f:
                root = f.read()
        channel = grpc.secure_channel(args.address, grpc.ssl_channel_credentials(root))
    else:
        channel = grpc.insecure_channel(args.address)
    return Server(
        taskqueue_pb2_grpc.TaskQueueStub(channel), admin_pb2_grpc.AdminStub(channel), args.timeout, channel
    )
