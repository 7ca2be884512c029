"""The server's settings: one frozen object, built once by the composition root (app.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds every request is checked against."""

    max_payload_bytes: int = 1024 * 1024
    max_batch: int = 1000
    max_name_length: int = 128
    max_key_length: int = 256
    max_error_length: int = 8192  # longer error messages are truncated, never rejected
    max_attempts: int = 1000
    max_delay: timedelta = timedelta(days=365)
    min_lease: timedelta = timedelta(seconds=1)
    max_lease: timedelta = timedelta(hours=12)
    max_wait: timedelta = timedelta(seconds=60)
    max_timeout: timedelta = timedelta(days=7)
    min_priority: int = -1000
    max_priority: int = 1000


@dataclass(frozen=True, slots=True)
class TaskDefaults:
    """What a task gets when the request leaves a field unset."""

    max_attempts: int = 5
    timeout: timedelta = timedelta(minutes=5)
    lease_duration: timedelta = timedelta(seconds=30)
    backoff_base: timedelta = timedelta(seconds=1)
    backoff_cap: timedelta = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str | None = None  # None: start the embedded PostgreSQL in data_dir
    data_dir: Path = Path.home() / ".local" / "share" / "taskqueue"
    listen: str = "127.0.0.1:50051"
    pool_size: int = 4  # about 2x the cores was fastest in our measurements
    pool_timeout: timedelta = timedelta(seconds=5)
    reap_interval: timedelta = timedelta(seconds=2)
    reap_batch: int = 1000
    backup_poll: timedelta = timedelta(seconds=2)  # long-poll re-check in case a notification is lost
    grace_period: timedelta = timedelta(seconds=10)
    max_message_bytes: int = 16 * 1024 * 1024
    log_level: str = "INFO"
    log_json: bool = True
    limits: Limits = Limits()
    defaults: TaskDefaults = TaskDefaults()
