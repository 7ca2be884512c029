"""Where the server is and how to talk to it: from arguments, else TASKQUEUE_* variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

DEFAULT_ADDRESS = "127.0.0.1:50051"


@dataclass(frozen=True, slots=True)
class ConnectionSettings:
    address: str = DEFAULT_ADDRESS
    tls: bool = False
    tls_ca_file: Path | None = None  # None with tls: the system's root certificates
    timeout: timedelta = timedelta(seconds=10)  # per call, retries included
    retry_unavailable: bool = True

    @classmethod
    def resolve(
        cls,
        address: str | None = None,
        *,
        tls: bool | None = None,
        tls_ca_file: str | Path | None = None,
        timeout: float | timedelta | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ConnectionSettings:
        """Arguments win; TASKQUEUE_ADDRESS, TASKQUEUE_TLS, TASKQUEUE_TLS_CA_FILE and
        TASKQUEUE_TIMEOUT (seconds) fill in what is left; then the defaults."""
        env = os.environ if env is None else env
        if tls is None:
            tls = env.get("TASKQUEUE_TLS", "").lower() in ("1", "true", "yes")
        ca = tls_ca_file or env.get("TASKQUEUE_TLS_CA_FILE") or None
        if timeout is None:
            timeout = float(env.get("TASKQUEUE_TIMEOUT", "10"))
        if not isinstance(timeout, timedelta):
            timeout = timedelta(seconds=timeout)
        return cls(
            address=address or env.get("TASKQUEUE_ADDRESS") or DEFAULT_ADDRESS,
            tls=tls or ca is not None,
            tls_ca_file=Path(ca) if ca else None,
            timeout=timeout,
        )
