"""Start the PostgreSQL shipped in the `pgserver` package, for running with nothing installed."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

log = logging.getLogger(__name__)


def start_embedded_postgres(data_dir: Path) -> str:
    """Start (or reuse) a PostgreSQL in data_dir/pgdata; returns its URL. It stops at exit."""
    logging.getLogger("pgserver").setLevel(logging.WARNING)  # it logs every command at INFO
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR on servers
        from pgserver import get_server  # type: ignore[attr-defined]  # exported, untyped

        data_dir.mkdir(parents=True, exist_ok=True)
        server = get_server(data_dir / "pgdata", cleanup_mode="stop")
    url: str = server.get_uri()
    log.info("embedded PostgreSQL running", extra={"data_dir": str(data_dir / "pgdata")})
    return url
