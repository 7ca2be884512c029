"""Composition root: read the settings, build every part, serve, and shut down in order.

The only module that reads the environment. `taskqueue serve` and `taskqueue migrate` start here.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

from grpc import aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection

from taskqueue.admin import Admin
from taskqueue.api.admin_servicer import AdminServicer
from taskqueue.api.error_interceptor import ErrorInterceptor
from taskqueue.api.task_queue_servicer import TaskQueueServicer
from taskqueue.clock import Clock, DatabaseClock
from taskqueue.config import Limits, Settings, TaskDefaults
from taskqueue.errors import TaskQueueError
from taskqueue.health_probe import check_health
from taskqueue.leasing import Leasing
from taskqueue.log_format import configure_logging
from taskqueue.producing import Producing
from taskqueue.reaper import Reaper
from taskqueue.reporting import Reporting
from taskqueue.storage import ready_notifications
from taskqueue.storage.database import Database
from taskqueue.storage.embedded_postgres import start_embedded_postgres
from taskqueue.storage.schema_migrations import assert_schema_current, upgrade_to_head
from taskqueue.wakeups import ReadyWakeups
from taskqueue_proto.v1 import admin_pb2, admin_pb2_grpc, taskqueue_pb2, taskqueue_pb2_grpc

log = logging.getLogger("taskqueue")

SERVICE_NAMES = (
    taskqueue_pb2.DESCRIPTOR.services_by_name["TaskQueue"].full_name,
    admin_pb2.DESCRIPTOR.services_by_name["Admin"].full_name,
)


@dataclass
class App:
    """A running server and the parts tests may reach into (the reaper, the port)."""

    settings: Settings
    db: Database
    server: aio.Server
    health: health_aio.HealthServicer
    leasing: Leasing
    reaper: Reaper
    wakeups: ReadyWakeups
    port: int
    background: list[asyncio.Task[None]] = field(default_factory=list)

    async def stop(self) -> None:
        """Stop in order: say NOT_SERVING, refuse new calls and let in-flight ones finish
        within the grace period, stop the background loops, close the pool."""
        log.info("shutting down", extra={"grace_seconds": self.settings.grace_period.total_seconds()})
        await self.health.enter_graceful_shutdown()
        self.leasing.close()  # waiting long-polls answer now, empty
        await self.server.stop(self.settings.grace_period.total_seconds())
        for task in self.background:
            task.cancel()
        await asyncio.gather(*self.background, return_exceptions=True)
        self.wakeups.close()
        await self.db.close()
        log.info("stopped")


async def resolve_database_url(settings: Settings) -> str:
    """The configured URL; or else the embedded PostgreSQL, migrated to head."""
    if settings.database_url:
        return settings.database_url
    url = await asyncio.to_thread(start_embedded_postgres, settings.data_dir)
    await asyncio.to_thread(upgrade_to_head, url)
    return url


async def start_app(settings: Settings, clock: Clock | None = None) -> App:
    clock = clock or DatabaseClock()
    url = await resolve_database_url(settings)
    db = Database(url, pool_size=settings.pool_size, pool_timeout=settings.pool_timeout)
    await db.open(timeout=timedelta(seconds=30))
    try:
        await assert_schema_current(db)
    except BaseException:
        await db.close()
        raise

    wakeups = ReadyWakeups()
    leasing = Leasing(db, clock, wakeups, settings.backup_poll)
    reaper = Reaper(db, clock, settings.reap_interval, settings.reap_batch)
    health = health_aio.HealthServicer()

    options = [
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
    ]
    server = aio.server(interceptors=[ErrorInterceptor()], options=options)
    taskqueue_pb2_grpc.add_TaskQueueServicer_to_server(
        TaskQueueServicer(
            Producing(db, clock, settings.limits.max_batch),
            leasing,
            Reporting(db, clock),
            settings.limits,
            settings.defaults,
        ),
        server,
    )
    admin_pb2_grpc.add_AdminServicer_to_server(AdminServicer(Admin(db, clock), settings.limits), server)
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    reflection.enable_server_reflection(
        (*SERVICE_NAMES, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
        server,
    )
    port = server.add_insecure_port(settings.listen)
    if port == 0:
        await db.close()
        raise TaskQueueError(f"cannot listen on {settings.listen}")
    await server.start()

    app = App(settings, db, server, health, leasing, reaper, wakeups, port)
    app.background = [
        asyncio.create_task(
            ready_notifications.listen(url, wakeups.task_ready, wakeups.wake_all, timedelta(seconds=1)),
            name="notification-listener",
        ),
        asyncio.create_task(reaper.run_forever(), name="reaper"),
    ]
    for name in ("", *SERVICE_NAMES):
        await health.set(name, health_pb2.HealthCheckResponse.SERVING)
    log.info("serving", extra={"listen": settings.listen, "port": port})
    return app


@contextmanager
def stop_on_signals(stop: asyncio.Event) -> Iterator[None]:
    """SIGTERM/SIGINT set `stop` while the server runs; the handlers go away afterwards."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    try:
        yield
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


async def serve(settings: Settings) -> int:
    app = await start_app(settings)
    stop = asyncio.Event()
    with stop_on_signals(stop):
        stopper = asyncio.create_task(stop.wait(), name="stop-signal")
        done, _ = await asyncio.wait([stopper, *app.background], return_when=asyncio.FIRST_COMPLETED)
        crashed = [t for t in done if t is not stopper]
        for task in crashed:
            # A background loop must never end; run half-alive and nobody notices. Stop instead.
            log.error("background task %s died: %r; stopping", task.get_name(), task.exception())
        stopper.cancel()
        await app.stop()
    return 1 if crashed else 0


def _env_seconds(env: Mapping[str, str], name: str, default: timedelta) -> float:
    return float(env.get(name, default.total_seconds()))


def parse_settings(argv: Sequence[str], env: Mapping[str, str]) -> tuple[str, Settings]:
    base = Settings()
    defaults = TaskDefaults()
    parser = argparse.ArgumentParser(prog="taskqueue", description="taskqueue server")
    commands = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--database-url",
            default=env.get("TASKQUEUE_DATABASE_URL"),
            help="PostgreSQL URL [env TASKQUEUE_DATABASE_URL]; unset: embedded PostgreSQL in --data-dir",
        )
        p.add_argument(
            "--data-dir",
            type=Path,
            default=Path(env.get("TASKQUEUE_DATA_DIR", str(base.data_dir))),
            help=f"embedded PostgreSQL data folder [env TASKQUEUE_DATA_DIR; default {base.data_dir}]",
        )
        p.add_argument(
            "--log-level",
            default=env.get("TASKQUEUE_LOG_LEVEL", base.log_level),
            help="DEBUG, INFO, WARNING or ERROR [env TASKQUEUE_LOG_LEVEL; default INFO]",
        )
        p.add_argument(
            "--log-format",
            choices=("json", "text"),
            default=env.get("TASKQUEUE_LOG_FORMAT", "json"),
            help="log line format [env TASKQUEUE_LOG_FORMAT; default json]",
        )

    serve_p = commands.add_parser("serve", help="run the gRPC server")
    common(serve_p)
    serve_p.add_argument(
        "--listen",
        default=env.get("TASKQUEUE_LISTEN", base.listen),
        help=f"host:port to serve gRPC on [env TASKQUEUE_LISTEN; default {base.listen}]",
    )
    serve_p.add_argument(
        "--pool-size",
        type=int,
        default=int(env.get("TASKQUEUE_POOL_SIZE", base.pool_size)),
        help=f"database connections [env TASKQUEUE_POOL_SIZE; default {base.pool_size}]",
    )
    serve_p.add_argument(
        "--reap-interval",
        type=float,
        default=_env_seconds(env, "TASKQUEUE_REAP_INTERVAL", base.reap_interval),
        help="seconds between reaper rounds [env TASKQUEUE_REAP_INTERVAL; default 2]",
    )
    serve_p.add_argument(
        "--grace-period",
        type=float,
        default=_env_seconds(env, "TASKQUEUE_GRACE_PERIOD", base.grace_period),
        help="seconds in-flight calls get at shutdown [env TASKQUEUE_GRACE_PERIOD; default 10]",
    )
    serve_p.add_argument(
        "--max-payload-bytes",
        type=int,
        default=int(env.get("TASKQUEUE_MAX_PAYLOAD_BYTES", Limits().max_payload_bytes)),
        help="largest task payload or result [env TASKQUEUE_MAX_PAYLOAD_BYTES; default 1 MiB]",
    )
    serve_p.add_argument(
        "--default-max-attempts",
        type=int,
        default=int(env.get("TASKQUEUE_DEFAULT_MAX_ATTEMPTS", defaults.max_attempts)),
        help="attempts when a task sets none [env TASKQUEUE_DEFAULT_MAX_ATTEMPTS; default 5]",
    )
    serve_p.add_argument(
        "--default-lease-duration",
        type=float,
        default=_env_seconds(env, "TASKQUEUE_DEFAULT_LEASE_DURATION", defaults.lease_duration),
        help="lease seconds when a worker sets none [env TASKQUEUE_DEFAULT_LEASE_DURATION; default 30]",
    )
    serve_p.add_argument(
        "--backoff-base",
        type=float,
        default=_env_seconds(env, "TASKQUEUE_BACKOFF_BASE", defaults.backoff_base),
        help="retry backoff base seconds [env TASKQUEUE_BACKOFF_BASE; default 1]",
    )
    serve_p.add_argument(
        "--backoff-cap",
        type=float,
        default=_env_seconds(env, "TASKQUEUE_BACKOFF_CAP", defaults.backoff_cap),
        help="retry backoff cap seconds [env TASKQUEUE_BACKOFF_CAP; default 3600]",
    )
    migrate_p = commands.add_parser("migrate", help="apply the database migrations (alembic upgrade head)")
    common(migrate_p)
    health_p = commands.add_parser("health", help="ask a running server whether it is SERVING (exit 0 if so)")
    health_p.add_argument(
        "--address",
        default=env.get("TASKQUEUE_ADDRESS", "127.0.0.1:50051"),
        help="server host:port [env TASKQUEUE_ADDRESS; default 127.0.0.1:50051]",
    )

    args = parser.parse_args(argv)
    if args.command == "health":
        return "health", replace(base, listen=args.address)
    settings = replace(
        base,
        database_url=args.database_url or None,
        data_dir=args.data_dir,
        log_level=args.log_level,
        log_json=args.log_format == "json",
    )
    if args.command == "serve":
        settings = replace(
            settings,
            listen=args.listen,
            pool_size=args.pool_size,
            reap_interval=timedelta(seconds=args.reap_interval),
            grace_period=timedelta(seconds=args.grace_period),
            limits=replace(base.limits, max_payload_bytes=args.max_payload_bytes),
            defaults=replace(
                defaults,
                max_attempts=args.default_max_attempts,
                lease_duration=timedelta(seconds=args.default_lease_duration),
                backoff_base=timedelta(seconds=args.backoff_base),
                backoff_cap=timedelta(seconds=args.backoff_cap),
            ),
        )
    return args.command, settings


def main(argv: Sequence[str] | None = None) -> int:
    import sys

    command_name, settings = parse_settings(sys.argv[1:] if argv is None else argv, os.environ)
    if command_name == "health":
        status = check_health(settings.listen)
        print(status)
        return 0 if status == "SERVING" else 1
    configure_logging(settings.log_level, settings.log_json)
    try:
        if command_name == "migrate":
            url = settings.database_url or start_embedded_postgres(settings.data_dir)
            upgrade_to_head(url)
            log.info("database migrated to head")
            return 0
        return asyncio.run(serve(settings))
    except TaskQueueError as e:
        log.error("%s", e)
        return 2
    except KeyboardInterrupt:
        return 130
