"""A PostgreSQL cluster the fault harness owns, on TCP, so it may restart it (fast or immediate).

It uses the binaries of the `pgserver` package, already installed with the server. PostgreSQL
refuses to run as root, so under root the cluster runs as pgserver's own `pgserver` user.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from pgserver._commands import POSTGRES_BIN_PATH  # type: ignore[import-untyped]
from pgserver.utils import (  # type: ignore[import-untyped]
    ensure_folder_permissions,
    ensure_prefix_permissions,
    ensure_user_exists,
)

_SYSTEM_USER = "pgserver"


class Cluster:
    def __init__(self, root: Path, port: int) -> None:
        self.root = root
        self.port = port
        self.data = root / "pgdata"
        self.sockets = root / "sockets"
        self.log = root / "postgres.log"
        self._as_other_user = os.geteuid() == 0

    def _run(self, *args: str, check: bool = True, quiet: bool = False) -> None:
        command = [str(POSTGRES_BIN_PATH / args[0]), *args[1:]]
        if self._as_other_user:
            command = ["runuser", "-u", _SYSTEM_USER, "--", *command]
        if quiet:
            # The postmaster pg_ctl starts would inherit our pipes and keep them open for ever.
            done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=120)  # fmt: skip
            if check and done.returncode != 0:
                raise RuntimeError(f"{args[0]} {' '.join(args[1:3])} failed; see {self.log}")
            return
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise RuntimeError(
                f"{args[0]} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}"
            )

    def init(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.sockets.mkdir(exist_ok=True)
        if self._as_other_user:
            # As pgserver itself does: the postgres user must reach the binaries (inside a
            # virtualenv that may sit in a 0700 folder) and the data folder.
            ensure_user_exists(_SYSTEM_USER)
            ensure_prefix_permissions(self.root)
            ensure_prefix_permissions(POSTGRES_BIN_PATH)
            readable = stat.S_IRGRP | stat.S_IROTH
            ensure_folder_permissions(POSTGRES_BIN_PATH, readable | stat.S_IXGRP | stat.S_IXOTH)
            ensure_folder_permissions(POSTGRES_BIN_PATH.parent / "lib", readable)
            shutil.chown(self.root, _SYSTEM_USER)
            shutil.chown(self.sockets, _SYSTEM_USER)
        self._run("initdb", "-D", str(self.data), "--auth=trust", "-U", "postgres", "--encoding=utf8")

    def start(self) -> None:
        options = f"-p {self.port} -h 127.0.0.1 -k {self.sockets} -c max_connections=300 -c fsync=on"
        self._run(
            "pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-l", str(self.log), "-o", options, "start"
        )

    def restart(self, mode: str) -> None:
        """mode: 'fast' (clients disconnected, clean shutdown) or 'immediate' (like a crash)."""
        log = str(self.log)
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-l", log, "-m", mode, "restart",
                  quiet=True)  # fmt: skip

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-w", "-m", "fast", "stop", check=False, quiet=True)

    def url(self, database: str = "postgres", port: int | None = None) -> str:
        return f"postgresql://postgres@127.0.0.1:{port or self.port}/{database}"
