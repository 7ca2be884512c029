-- name: task_complete_if_leased --
-- Applies a success only under a live lease (fencing). The successful attempt is not copied to task_attempts: the task row holds it (worker, started_at, finished_at), which saves a row and two index entries per task on the happy path.
UPDATE tasks t
SET status = 'succeeded',
    result = i.result,
    lease_expires_at = NULL,
    finished_at = coalesce(%(now)s::timestamptz, now()),
    updated_at = coalesce(%(now)s::timestamptz, now())
-- %(items)s: one JSON array per report, [task_id, lease_id, result or null].
FROM (SELECT (x->>0)::uuid AS id, (x->>1)::uuid AS lease_id, nullif(x->2, 'null') AS result
      FROM jsonb_array_elements(%(items)s::jsonb) AS e(x)) AS i
WHERE t.id = i.id AND t.lease_id = i.lease_id AND t.status = 'leased'
  AND t.lease_expires_at > coalesce(%(now)s::timestamptz, now())
RETURNING t.id

-- name: task_lock_for_failure --
-- Locks the tasks whose lease is still live so the retry decision (made in Python) cannot race the reaper.
SELECT t.id, t.attempts, t.max_attempts, t.backoff_base, t.backoff_cap, t.cancel_requested
FROM tasks t
JOIN unnest(%(ids)s::uuid[], %(lease_ids)s::uuid[]) AS i(id, lease_id)
  ON t.id = i.id AND t.lease_id = i.lease_id
WHERE t.status = 'leased' AND t.lease_expires_at > coalesce(%(now)s::timestamptz, now())
ORDER BY t.id
FOR UPDATE OF t

-- name: task_fail_locked --
-- Applies the decided outcome of each failure (requeue with a delay, dead or cancelled) and records the attempt.
WITH failed AS (
    UPDATE tasks t
    SET status = i.status,
        run_at = CASE WHEN i.status = 'queued'
                      THEN coalesce(%(now)s::timestamptz, now()) + i.delay ELSE t.run_at END,
        last_error = i.error,
        lease_expires_at = NULL,
        finished_at = CASE WHEN i.status = 'queued' THEN NULL
                           ELSE coalesce(%(now)s::timestamptz, now()) END,
        updated_at = coalesce(%(now)s::timestamptz, now())
    FROM unnest(%(ids)s::uuid[], %(statuses)s::text[], %(delays)s::interval[], %(errors)s::text[])
         AS i(id, status, delay, error)
    WHERE t.id = i.id
    RETURNING t.id, t.queue, t.status, t.run_at, t.attempts, t.lease_id, t.lease_owner,
              t.started_at, t.updated_at, t.last_error
), history AS (
    INSERT INTO task_attempts (task_id, attempt, lease_id, worker_id, started_at, ended_at, outcome, error)
    SELECT id, attempts, lease_id, lease_owner, started_at, updated_at, 'failed', last_error FROM failed
)
SELECT id, queue, status, run_at FROM failed

-- name: task_reap_expired --
-- Returns expired leases to the queue (or to dead/cancelled); SKIP LOCKED keeps reapers in several processes from reaping one task twice.
WITH expired AS (
    SELECT id FROM tasks
    WHERE status = 'leased' AND lease_expires_at <= coalesce(%(now)s::timestamptz, now())
    ORDER BY lease_expires_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
), reaped AS (
    UPDATE tasks t
    SET status = CASE WHEN t.cancel_requested THEN 'cancelled'
                      WHEN t.attempts >= t.max_attempts THEN 'dead'
                      ELSE 'queued' END,
        run_at = coalesce(%(now)s::timestamptz, now()),
        last_error = 'lease expired: worker ' || t.lease_owner || ' stopped heartbeating',
        lease_expires_at = NULL,
        finished_at = CASE WHEN t.cancel_requested OR t.attempts >= t.max_attempts
                           THEN coalesce(%(now)s::timestamptz, now()) END,
        updated_at = coalesce(%(now)s::timestamptz, now())
    FROM expired e
    WHERE t.id = e.id
    RETURNING t.id, t.queue, t.status, t.run_at, t.attempts, t.lease_id, t.lease_owner,
              t.started_at, t.updated_at, t.last_error
), history AS (
    INSERT INTO task_attempts (task_id, attempt, lease_id, worker_id, started_at, ended_at, outcome, error)
    SELECT id, attempts, lease_id, lease_owner, started_at, updated_at, 'lease_expired', last_error
    FROM reaped
)
SELECT id, queue, status, run_at FROM reaped
