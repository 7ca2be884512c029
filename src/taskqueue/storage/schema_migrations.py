"""Apply the alembic migrations, and check that a database is at the code's schema version."""

from __future__ import annotations

from pathlib import Path

import psycopg
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

from taskqueue.errors import TaskQueueError
from taskqueue.storage.database import Database

# src/taskqueue/storage/ -> the project root, where alembic.ini and migrations/ live.
PROJECT_ROOT = Path(__file__).resolve().parents[3]


class SchemaNotReady(TaskQueueError):
    """The database is not migrated to the version this server needs."""


def _alembic_config(url: str | None = None) -> Config:
    ini = PROJECT_ROOT / "alembic.ini"
    if not ini.exists():
        raise SchemaNotReady(f"alembic.ini not found at {ini}; run taskqueue from a source checkout")
    config = Config(str(ini))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    if head is None:
        raise SchemaNotReady("the migrations folder holds no revision")
    return head


def upgrade_to_head(url: str) -> None:
    """Blocking; run it before the event loop serves traffic."""
    command.upgrade(_alembic_config(url), "head")


def downgrade_to(url: str, revision: str) -> None:
    command.downgrade(_alembic_config(url), revision)


async def assert_schema_current(db: Database) -> None:
    head = head_revision()
    async with db.connection() as conn:
        try:
            cur = await conn.execute("SELECT version_num FROM alembic_version")
            row = await cur.fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
    current = row[0] if row else None
    if current != head:
        raise SchemaNotReady(
            f"the database schema is at revision {current or 'none (empty database)'} but this "
            f"server needs {head}; run `taskqueue migrate` (or `alembic upgrade head`) first"
        )
