"""Find a PostgreSQL server for the tests, build a migrated template once, and clone it.

Order: TASKQUEUE_TEST_DATABASE_URL, the local server on 127.0.0.1:5432, testcontainers where a
Docker engine works, then the embedded PostgreSQL of the `pgserver` package.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from taskqueue.storage.schema_migrations import upgrade_to_head

LOCAL_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def _reachable(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=3):
            return True
    except psycopg.Error:
        return False


@contextlib.contextmanager
def _testcontainers_postgres() -> Iterator[str | None]:
    if shutil.which("docker") is None:
        yield None
        return
    try:
        from testcontainers.postgres import PostgresContainer

        container = PostgresContainer("postgres:16-alpine", driver=None)
        container.start()
    except Exception:  # no engine, no image, no permission: fall through to the next source
        yield None
        return
    try:
        yield container.get_connection_url()
    finally:
        container.stop()


@contextlib.contextmanager
def _embedded_postgres() -> Iterator[str]:
    from taskqueue.storage.embedded_postgres import start_embedded_postgres

    with tempfile.TemporaryDirectory(prefix="taskqueue-test-pg-") as data_dir:
        yield start_embedded_postgres(Path(data_dir))


@contextlib.contextmanager
def database_server() -> Iterator[tuple[str, str]]:
    """(maintenance URL, where it came from) of a server the tests may create databases on.

    TASKQUEUE_TEST_DATABASE_URL must be a postgresql:// URL."""
    explicit = os.environ.get("TASKQUEUE_TEST_DATABASE_URL")
    if explicit:
        yield explicit, "TASKQUEUE_TEST_DATABASE_URL"
        return
    if _reachable(LOCAL_URL):
        yield LOCAL_URL, "local server 127.0.0.1:5432"
        return
    with _testcontainers_postgres() as url:
        if url is not None:
            yield url, "testcontainers"
            return
    with _embedded_postgres() as url:
        yield url, "embedded pgserver"


def with_database(url: str, dbname: str) -> str:
    """The same server URL (postgresql://...) with another database name."""
    return urlunsplit(urlsplit(url)._replace(path="/" + dbname))


@dataclass
class DatabaseFactory:
    """Creates databases on one server: a migrated template once, then cheap clones of it."""

    server_url: str
    created: list[str] = field(default_factory=list)
    template: str | None = None

    def _admin(self) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(self.server_url, autocommit=True)

    def create_empty(self, prefix: str = "tq_test") -> str:
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with self._admin() as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        self.created.append(name)
        return with_database(self.server_url, name)

    def clone_migrated(self) -> str:
        """A fresh database at the head schema, cloned from the session's template."""
        if self.template is None:
            template_url = self.create_empty("tq_template")
            upgrade_to_head(template_url)
            self.template = urlsplit(template_url).path.lstrip("/")
        name = f"tq_test_{uuid.uuid4().hex[:12]}"
        with self._admin() as conn:
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(name), sql.Identifier(str(self.template))
                )
            )
        self.created.append(name)
        return with_database(self.server_url, name)

    def drop_all(self) -> None:
        with self._admin() as conn:
            for name in reversed(self.created):
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        self.created.clear()
