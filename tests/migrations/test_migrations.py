"""Migrations: an empty database migrates to the committed schema, and up/down/up works."""

from __future__ import annotations

import os
import subprocess
import sys

import psycopg

from taskqueue.storage.schema_migrations import downgrade_to, head_revision, upgrade_to_head
from tests.migrations.schema_dump import dump_schema
from tests.support.databases import DatabaseFactory
from tests.support.server import PROJECT_ROOT

SNAPSHOT = PROJECT_ROOT / "migrations" / "schema.sql"


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {r[0] for r in rows}


def test_empty_database_migrates_to_the_committed_schema(databases: DatabaseFactory) -> None:
    url = databases.create_empty()
    upgrade_to_head(url)
    actual = dump_schema(url)
    if os.environ.get("UPDATE_SCHEMA_SNAPSHOT") == "1":
        SNAPSHOT.write_text(actual)
    assert actual == SNAPSHOT.read_text(), (
        "the migrations no longer produce migrations/schema.sql; if the change is intended, "
        "rerun with UPDATE_SCHEMA_SNAPSHOT=1 and commit the new snapshot"
    )


def test_upgrade_downgrade_upgrade(databases: DatabaseFactory) -> None:
    url = databases.create_empty()
    upgrade_to_head(url)
    first = dump_schema(url)
    downgrade_to(url, "base")
    assert _tables(url) == {"alembic_version"}
    upgrade_to_head(url)
    assert dump_schema(url) == first


def test_alembic_command_line_upgrades_with_the_env_url(databases: DatabaseFactory) -> None:
    url = databases.create_empty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKQUEUE_")}
    env["TASKQUEUE_DATABASE_URL"] = url
    done = subprocess.run(
        [sys.executable, "-m", "alembic", "upgrade", "head"],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == (head_revision(),)
