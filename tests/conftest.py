"""Shared fixtures: a real PostgreSQL (never a fake), migrated databases, real gRPC servers."""

from __future__ import annotations

import os
from collections.abc import Iterator

import psycopg
import pytest

from tests.support.clock import ShiftedClock
from tests.support.databases import DatabaseFactory, database_server
from tests.support.server import InProcessServer, server_settings

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def databases() -> Iterator[DatabaseFactory]:
    try:
        with database_server() as (url, source):
            print(f"\ntests use PostgreSQL from {source}")
            factory = DatabaseFactory(url)
            try:
                yield factory
            finally:
                factory.drop_all()
    except Exception as e:
        if IN_CI:
            pytest.fail(f"no PostgreSQL for the tests, and CI must not skip: {e}")
        pytest.skip(f"no PostgreSQL available: {e}")


@pytest.fixture
def fresh_db(databases: DatabaseFactory) -> str:
    """A database of its own at the head schema, for tests that need isolation."""
    return databases.clone_migrated()


@pytest.fixture(scope="session")
def shared_db(databases: DatabaseFactory) -> str:
    """One migrated database for the in-process server; emptied before each test that uses it."""
    return databases.clone_migrated()


@pytest.fixture(scope="session")
def clock() -> ShiftedClock:
    return ShiftedClock()


@pytest.fixture(scope="session")
def _session_server(shared_db: str, clock: ShiftedClock) -> Iterator[InProcessServer]:
    server = InProcessServer(server_settings(shared_db), clock)
    yield server
    server.stop()


@pytest.fixture
def server(_session_server: InProcessServer, shared_db: str, clock: ShiftedClock) -> InProcessServer:
    """A real gRPC server on a real port, over an empty tasks table and an unshifted clock."""
    with psycopg.connect(shared_db, autocommit=True) as conn:
        conn.execute("TRUNCATE tasks, task_attempts")
    clock.offset = clock.offset * 0
    return _session_server
