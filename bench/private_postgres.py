"""A PostgreSQL the benchmark owns: started in a temporary folder, one fresh database per system."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from taskqueue.storage.embedded_postgres import start_embedded_postgres


@contextmanager
def private_postgres() -> Iterator[str]:
    """Yields the URL of the maintenance database of a private server (the pgserver binaries)."""
    with tempfile.TemporaryDirectory(prefix="taskqueue-bench-pg-") as folder:
        yield start_embedded_postgres(Path(folder))


def fresh_database(server_url: str, prefix: str) -> str:
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # name is ours: a prefix and hex digits
    return urlunsplit(urlsplit(server_url)._replace(path="/" + name))


def drop_database(server_url: str, url: str) -> None:
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def server_version(url: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    return str(row[0]) if row else "?"
