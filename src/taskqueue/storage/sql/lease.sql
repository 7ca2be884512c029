-- name: task_lease_available --
-- Per queue, walks tasks_dequeue_idx in dequeue order; SKIP LOCKED lets concurrent workers lease without waiting on each other.
WITH picked AS (
    SELECT c.id
    FROM unnest(%(queues)s::text[]) AS q(name)
    CROSS JOIN LATERAL (
        SELECT t.id, t.priority, t.run_at
        FROM tasks t
        WHERE t.status = 'queued'
          AND t.queue = q.name
          AND t.run_at <= coalesce(%(now)s::timestamptz, now())
          AND (%(any_type)s::boolean OR t.type = ANY(%(types)s::text[]))
        ORDER BY t.priority DESC, t.run_at, t.id
        LIMIT %(limit)s
        FOR UPDATE SKIP LOCKED
    ) AS c
    ORDER BY c.priority DESC, c.run_at, c.id
    LIMIT %(limit)s
)
UPDATE tasks t
SET status = 'leased',
    attempts = t.attempts + 1,
    lease_id = gen_random_uuid(),
    lease_owner = %(worker_id)s,
    lease_expires_at = coalesce(%(now)s::timestamptz, now()) + %(lease_duration)s::interval,
    started_at = coalesce(%(now)s::timestamptz, now()),
    updated_at = coalesce(%(now)s::timestamptz, now())
FROM picked
WHERE t.id = picked.id
RETURNING t.id, t.lease_id, t.queue, t.type, t.payload::text, t.attempts, t.max_attempts,
          t.lease_expires_at, t.timeout, t.priority

-- name: task_heartbeat_if_leased --
-- Extends only leases the caller still holds and that have not expired.
UPDATE tasks t
SET lease_expires_at = coalesce(%(now)s::timestamptz, now()) + %(lease_duration)s::interval,
    updated_at = coalesce(%(now)s::timestamptz, now())
FROM unnest(%(ids)s::uuid[], %(lease_ids)s::uuid[]) AS i(id, lease_id)
WHERE t.id = i.id AND t.lease_id = i.lease_id AND t.status = 'leased'
  AND t.lease_expires_at > coalesce(%(now)s::timestamptz, now())
RETURNING t.id, t.lease_expires_at, t.cancel_requested

-- name: task_lease_state --
-- Explains a rejected report: where each task stands now (missing ids are simply absent).
SELECT id, status, lease_id, lease_expires_at
FROM tasks
WHERE id = ANY(%(ids)s::uuid[])

-- name: task_release_if_leased --
-- Hands leases back: the task is ready again at once and the attempt it was leased for is not counted.
UPDATE tasks t
SET status = 'queued',
    attempts = t.attempts - 1,
    run_at = coalesce(%(now)s::timestamptz, now()),
    lease_expires_at = NULL,
    updated_at = coalesce(%(now)s::timestamptz, now())
FROM unnest(%(ids)s::uuid[], %(lease_ids)s::uuid[]) AS i(id, lease_id)
WHERE t.id = i.id AND t.lease_id = i.lease_id AND t.status = 'leased'
  AND t.lease_expires_at > coalesce(%(now)s::timestamptz, now())
RETURNING t.id, t.queue, t.run_at
