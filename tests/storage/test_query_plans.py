"""EXPLAIN checks on seeded data: the hot statements must use their indexes, so an index
regression fails here rather than in production."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any, LiteralString

import psycopg
import pytest

from taskqueue.storage.queries import QUERIES

FINISHED_ROWS = 200_000


@pytest.fixture(scope="module")
def seeded_db(databases: Any) -> str:
    url: str = databases.clone_migrated()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            """
            INSERT INTO tasks (queue, type, payload, status, attempts, max_attempts, timeout, backoff_base,
                               backoff_cap, finished_at, run_at, created_at)
            SELECT 'q' || (i %% 5), 'job', '{}', 'succeeded', 1, 3, '1 min', '1 s', '1 h',
                   now() - (i || ' s')::interval, now() - (i || ' s')::interval, now() - (i || ' s')::interval
            FROM generate_series(1, %(n)s) AS i
            """,
            {"n": FINISHED_ROWS},
        )
        conn.execute(
            """
            INSERT INTO tasks (queue, type, payload, max_attempts, timeout, backoff_base, backoff_cap, run_at)
            SELECT 'q' || (i % 5), 'job', '{}', 3, '1 min', '1 s', '1 h', now() - (i || ' ms')::interval
            FROM generate_series(1, 2000) AS i
            """
        )
        conn.execute(
            """
            INSERT INTO tasks (queue, type, payload, status, attempts, max_attempts, timeout, backoff_base,
                               backoff_cap, lease_id, lease_owner, lease_expires_at, started_at)
            SELECT 'q1', 'job', '{}', 'leased', 1, 3, '1 min', '1 s', '1 h', gen_random_uuid(), 'w',
                   now() + (i || ' s')::interval, now()
            FROM generate_series(1, 2000) AS i
            """
        )
        conn.execute("VACUUM ANALYZE tasks")
    return url


def _plan(url: str, name: str, params: dict[str, Any]) -> set[tuple[str, str, str]]:
    """(node type, relation, index) of every node that reads a table or an index."""
    with psycopg.connect(url) as conn:
        query: LiteralString = "EXPLAIN (FORMAT JSON) " + QUERIES[name]
        row = conn.execute(query, params).fetchone()
        conn.rollback()
    assert row is not None
    nodes: set[tuple[str, str, str]] = set()

    def walk(node: dict[str, Any]) -> None:
        if "Relation Name" in node or "Index Name" in node:
            nodes.add((node["Node Type"], node.get("Relation Name", ""), node.get("Index Name", "")))
        for child in node.get("Plans", []):
            walk(child)

    walk(row[0][0]["Plan"])
    return nodes


def _scans(plan: set[tuple[str, str, str]]) -> str:
    return json.dumps(sorted(plan))


def test_lease_walks_the_dequeue_index(seeded_db: str) -> None:
    params = {
        "now": None,
        "queues": ["q1", "q2"],
        "any_type": True,
        "types": [],
        "limit": 100,
        "worker_id": "w",
        "lease_duration": timedelta(seconds=30),
    }
    plan = _plan(seeded_db, "task_lease_available", params)
    assert any(index == "tasks_dequeue_idx" for _, _, index in plan), _scans(plan)
    assert not any(node == "Seq Scan" and rel == "tasks" for node, rel, _ in plan), _scans(plan)


def test_reaper_walks_the_lease_expiry_index(seeded_db: str) -> None:
    plan = _plan(seeded_db, "task_reap_expired", {"now": None, "limit": 1000})
    assert any(index == "tasks_lease_expiry_idx" for _, _, index in plan), _scans(plan)
    assert not any(node == "Seq Scan" and rel == "tasks" for node, rel, _ in plan), _scans(plan)


def test_reports_never_scan_finished_history(seeded_db: str) -> None:
    # The planner may look tasks up by primary key or walk the (small) set of live leases;
    # either is fine, scanning the table with its 200k finished rows is not.
    items = json.dumps([[str(uuid.uuid4()), str(uuid.uuid4()), None] for _ in range(50)])
    plan = _plan(seeded_db, "task_complete_if_leased", {"now": None, "items": items})
    assert any(index in ("tasks_pkey", "tasks_lease_expiry_idx") for _, _, index in plan), _scans(plan)
    assert not any(node == "Seq Scan" and rel == "tasks" for node, rel, _ in plan), _scans(plan)
