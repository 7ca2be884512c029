"""Return expired leases to the queue (or to dead), one batch per statement."""

from __future__ import annotations

from datetime import datetime

from taskqueue.storage.database import Database
from taskqueue.storage.queries import QUERIES
from taskqueue.storage.ready_notifications import notify_ready


async def reap_expired(db: Database, limit: int, now: datetime | None) -> dict[str, int]:
    """Reap up to `limit` expired leases; returns how many went to each new status."""
    async with db.transaction() as conn:
        cur = await conn.execute(QUERIES["task_reap_expired"], {"now": now, "limit": limit})
        rows = await cur.fetchall()
        await notify_ready(conn, ((queue, at) for _, queue, status, at in rows if status == "queued"))
    counts: dict[str, int] = {}
    for _, _, status, _ in rows:
        counts[status] = counts.get(status, 0) + 1
    return counts
