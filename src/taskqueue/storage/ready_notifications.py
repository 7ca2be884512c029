"""LISTEN/NOTIFY on the channel `taskqueue_ready`: "a task in queue Q is ready at time T".

Every transition into the queued state sends one notification per queue and batch, so a
long-polling Lease in any server process on the same database wakes within milliseconds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

import psycopg

from taskqueue.storage.database import Connection
from taskqueue.storage.queries import QUERIES

log = logging.getLogger(__name__)

CHANNEL = "taskqueue_ready"


async def notify_ready(conn: Connection, rows: Iterable[tuple[str, datetime]]) -> None:
    """Announce (queue, run_at) pairs: one message per queue, carrying its earliest run_at."""
    earliest: dict[str, datetime] = {}
    for queue, run_at in rows:
        if queue not in earliest or run_at < earliest[queue]:
            earliest[queue] = run_at
    if earliest:
        messages = [f"{at.timestamp():.3f} {queue}" for queue, at in earliest.items()]
        await conn.execute(QUERIES["task_notify_ready"], {"messages": messages})


def parse(message: str) -> tuple[str, float] | None:
    """'<epoch> <queue>' -> (queue, epoch); None for anything else on the channel."""
    at, _, queue = message.partition(" ")
    try:
        return queue, float(at)
    except ValueError:
        return None


async def listen(
    url: str,
    on_ready: Callable[[str, float], None],
    on_reconnect: Callable[[], None],
    retry_delay: timedelta,
) -> None:
    """Forward notifications to on_ready until cancelled, reconnecting whenever the link drops.

    After each (re)connection on_reconnect runs, because notifications sent while we were away
    are lost and waiters must look at the table again.
    """
    while True:
        try:
            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
                await conn.execute(f"LISTEN {CHANNEL}")
                log.info("listening for ready tasks")
                on_reconnect()
                async for note in conn.notifies():
                    parsed = parse(note.payload)
                    if parsed is not None:
                        on_ready(*parsed)
        except psycopg.OperationalError as e:
            log.warning("notification listener lost its connection (%s); reconnecting", e)
        await asyncio.sleep(retry_delay.total_seconds())
