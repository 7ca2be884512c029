"""A stable text description of the public schema, for comparing against migrations/schema.sql.

Run `python -m tests.migrations.schema_dump URL > migrations/schema.sql` to refresh the snapshot
after adding a migration (and review the diff: it is the schema change you are committing).
"""

from __future__ import annotations

import sys

import psycopg

TABLES = """
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       coalesce(pg_get_expr(d.adbin, d.adrelid), ''), a.attidentity
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE c.relkind = 'r'
ORDER BY c.relname, a.attnum
"""

CONSTRAINTS = """
SELECT c.relname, k.conname, pg_get_constraintdef(k.oid)
FROM pg_constraint k
JOIN pg_class c ON c.oid = k.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
ORDER BY c.relname, k.conname
"""

INDEXES = """
SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname
"""


def dump_schema(url: str) -> str:
    lines: list[str] = []
    with psycopg.connect(url) as conn:
        table = None
        for relname, column, type_, not_null, default, identity in conn.execute(TABLES):
            if relname != table:
                lines.append(f"\nTABLE {relname}")
                table = relname
            extra = " NOT NULL" if not_null else ""
            extra += f" DEFAULT {default}" if default else ""
            extra += " IDENTITY" if identity else ""
            lines.append(f"  {column} {type_}{extra}")
        lines.append("")
        for relname, name, definition in conn.execute(CONSTRAINTS):
            lines.append(f"CONSTRAINT {relname}.{name} {definition}")
        lines.append("")
        for _name, definition in conn.execute(INDEXES):
            lines.append(f"{definition};")
    header = "-- The schema `alembic upgrade head` yields, as tests/migrations/schema_dump.py describes it.\n"
    return header + "\n".join(lines).strip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(dump_schema(sys.argv[1]))
