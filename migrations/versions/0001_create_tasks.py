"""Create the tasks table, the attempt history and the dequeue indexes.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    CREATE TABLE tasks (
        id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
        queue            text        NOT NULL,
        type             text        NOT NULL,
        payload          jsonb       NOT NULL,
        payload_hash     bytea,
        priority         smallint    NOT NULL DEFAULT 0,
        status           text        NOT NULL DEFAULT 'queued',
        attempts         integer     NOT NULL DEFAULT 0,
        max_attempts     integer     NOT NULL,
        run_at           timestamptz NOT NULL DEFAULT now(),
        timeout          interval    NOT NULL,
        backoff_base     interval    NOT NULL,
        backoff_cap      interval    NOT NULL,
        lease_id         uuid,
        lease_owner      text,
        lease_expires_at timestamptz,
        cancel_requested boolean     NOT NULL DEFAULT false,
        idempotency_key  text,
        last_error       text,
        result           jsonb,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now(),
        started_at       timestamptz,
        finished_at      timestamptz,
        CONSTRAINT tasks_status_valid
            CHECK (status IN ('queued', 'leased', 'succeeded', 'dead', 'cancelled')),
        CONSTRAINT tasks_attempts_within_max
            CHECK (attempts >= 0 AND attempts <= max_attempts AND max_attempts >= 1),
        CONSTRAINT tasks_finished_iff_finished_at
            CHECK ((status IN ('succeeded', 'dead', 'cancelled')) = (finished_at IS NOT NULL)),
        CONSTRAINT tasks_leased_iff_lease_expiry
            CHECK ((status = 'leased') = (lease_expires_at IS NOT NULL)),
        CONSTRAINT tasks_leased_has_lease
            CHECK (status <> 'leased' OR (lease_id IS NOT NULL AND lease_owner IS NOT NULL
                                          AND started_at IS NOT NULL AND attempts >= 1)),
        CONSTRAINT tasks_key_has_hash
            CHECK ((idempotency_key IS NULL) = (payload_hash IS NULL)),
        CONSTRAINT tasks_backoff_ordered
            CHECK (backoff_base > interval '0' AND backoff_base <= backoff_cap)
    );

    -- Matches the dequeue order exactly (queue, then priority DESC, run_at, id) and holds only
    -- queued rows, so finding the next task costs the same with millions of finished rows.
    CREATE INDEX tasks_dequeue_idx ON tasks (queue, priority DESC, run_at, id)
        WHERE status = 'queued';

    -- The reaper walks expired leases oldest first.
    CREATE INDEX tasks_lease_expiry_idx ON tasks (lease_expires_at) WHERE status = 'leased';

    -- One task per (queue, idempotency_key); the unique index is what makes racing enqueues safe.
    CREATE UNIQUE INDEX tasks_idempotency_key_idx ON tasks (queue, idempotency_key)
        WHERE idempotency_key IS NOT NULL;

    -- Operators list dead letters newest first, per queue.
    CREATE INDEX tasks_dead_idx ON tasks (queue, finished_at DESC) WHERE status = 'dead';

    CREATE TABLE task_attempts (
        id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        task_id     uuid        NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
        attempt     integer     NOT NULL,
        lease_id    uuid        NOT NULL,
        worker_id   text        NOT NULL,
        started_at  timestamptz NOT NULL,
        ended_at    timestamptz NOT NULL,
        outcome     text        NOT NULL,
        error       text,
        CONSTRAINT task_attempts_outcome_valid
            CHECK (outcome IN ('succeeded', 'failed', 'lease_expired')),
        CONSTRAINT task_attempts_error_on_failure
            CHECK ((outcome IN ('failed', 'lease_expired')) = (error IS NOT NULL)),
        CONSTRAINT task_attempts_ordered CHECK (ended_at >= started_at AND attempt >= 1)
    );

    CREATE INDEX task_attempts_task_idx ON task_attempts (task_id, id);
    """)


def downgrade() -> None:
    op.execute("""
    DROP TABLE task_attempts;
    DROP TABLE tasks;
    """)
