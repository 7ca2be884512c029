"""The SQL of taskqueue, loaded once from the named queries in `sql/*.sql`."""

from __future__ import annotations

import re
from importlib import resources
from typing import LiteralString, cast

_HEADER = re.compile(r"^-- name: (\w+) --\s*$", re.MULTILINE)


def _load() -> dict[str, LiteralString]:
    queries: dict[str, LiteralString] = {}
    for entry in sorted(resources.files(__package__).joinpath("sql").iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".sql"):
            continue
        parts = _HEADER.split(entry.read_text(encoding="utf-8"))
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            if name in queries:
                raise RuntimeError(f"query {name} is defined twice (second time in {entry.name})")
            # The files are ours, shipped with the package: as trusted as a literal in code.
            queries[name] = cast(LiteralString, body.strip())
    return queries


QUERIES = _load()
