"""The connection pool, and the one place where psycopg errors become taskqueue errors."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.types.string import TextLoader
from psycopg_pool import AsyncConnectionPool

from taskqueue.errors import Unavailable

log = logging.getLogger(__name__)

# Rows are plain tuples; each query module unpacks them into domain objects.
Connection = AsyncConnection[tuple[Any, ...]]


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


async def _configure(conn: Connection) -> None:
    # uuid columns load as canonical text (the domain's TaskId), not as uuid.UUID objects.
    conn.adapters.register_loader("uuid", TextLoader)


class Database:
    """A small pool of autocommit connections; `transaction()` for multi-statement work."""

    def __init__(self, url: str, *, pool_size: int, pool_timeout: timedelta) -> None:
        self._pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
            url,
            min_size=pool_size,
            max_size=pool_size,
            timeout=pool_timeout.total_seconds(),
            open=False,
            kwargs={"autocommit": True},
            configure=_configure,
            name="taskqueue",
        )
        self.url = url

    async def open(self, timeout: timedelta) -> None:
        try:
            await self._pool.open(wait=True, timeout=timeout.total_seconds())
        except psycopg.OperationalError as e:
            raise Unavailable(f"cannot connect to the database: {_first_line(e)}") from e

    async def close(self) -> None:
        await self._pool.close()

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A pooled connection in autocommit mode: each statement is its own transaction."""
        try:
            async with self._pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.errors.DeadlockDetected) as e:
            # Connection loss, server shutdown, pool exhaustion, deadlock: all safe to retry.
            log.warning("database unavailable: %s", _first_line(e))
            raise Unavailable(f"database unavailable, retry later: {_first_line(e)}") from e

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        async with self.connection() as conn, conn.transaction():
            yield conn
