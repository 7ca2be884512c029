-- name: task_get --
-- One task; "scheduled" is derived from run_at against the same clock the dequeue uses.
SELECT id, queue, type, payload::text, priority,
       CASE WHEN status = 'queued' AND run_at > coalesce(%(now)s::timestamptz, now())
            THEN 'scheduled' ELSE status END,
       attempts, max_attempts, run_at, timeout, idempotency_key, last_error, result::text,
       cancel_requested, lease_owner, lease_expires_at, created_at, updated_at, started_at,
       finished_at
FROM tasks
WHERE id = %(id)s

-- name: task_attempts_of --
-- Finished attempts of one task, oldest first (the running one is derived from the task row).
SELECT attempt, worker_id, started_at, ended_at, outcome, error
FROM task_attempts
WHERE task_id = %(id)s
ORDER BY id

-- name: task_list --
-- Newest first with keyset paging; every filter is optional (NULL = any).
SELECT id, queue, type, payload::text, priority,
       CASE WHEN status = 'queued' AND run_at > coalesce(%(now)s::timestamptz, now())
            THEN 'scheduled' ELSE status END,
       attempts, max_attempts, run_at, timeout, idempotency_key, last_error, result::text,
       cancel_requested, lease_owner, lease_expires_at, created_at, updated_at, started_at,
       finished_at
FROM tasks t
WHERE (%(queue)s::text IS NULL OR t.queue = %(queue)s::text)
  AND (%(type)s::text IS NULL OR t.type = %(type)s::text)
  AND (%(status)s::text IS NULL
       OR (%(status)s::text = 'scheduled' AND t.status = 'queued'
           AND t.run_at > coalesce(%(now)s::timestamptz, now()))
       OR (%(status)s::text = 'queued' AND t.status = 'queued'
           AND t.run_at <= coalesce(%(now)s::timestamptz, now()))
       OR (%(status)s::text NOT IN ('queued', 'scheduled') AND t.status = %(status)s::text))
  AND (%(error_contains)s::text IS NULL
       OR strpos(lower(t.last_error), lower(%(error_contains)s::text)) > 0)
  AND (%(created_after)s::timestamptz IS NULL OR t.created_at >= %(created_after)s::timestamptz)
  AND (%(created_before)s::timestamptz IS NULL OR t.created_at < %(created_before)s::timestamptz)
  AND (%(cursor_created_at)s::timestamptz IS NULL
       OR (t.created_at, t.id) < (%(cursor_created_at)s::timestamptz, %(cursor_id)s::uuid))
ORDER BY t.created_at DESC, t.id DESC
LIMIT %(limit)s

-- name: queue_stats --
-- Counts by status per queue; a full scan, meant for operators rather than hot paths.
SELECT queue,
       count(*) FILTER (WHERE status = 'queued' AND run_at <= coalesce(%(now)s::timestamptz, now())),
       count(*) FILTER (WHERE status = 'queued' AND run_at > coalesce(%(now)s::timestamptz, now())),
       count(*) FILTER (WHERE status = 'leased'),
       count(*) FILTER (WHERE status = 'succeeded'),
       count(*) FILTER (WHERE status = 'dead'),
       count(*) FILTER (WHERE status = 'cancelled'),
       coalesce(%(now)s::timestamptz, now())
         - min(run_at) FILTER (WHERE status = 'queued' AND run_at <= coalesce(%(now)s::timestamptz, now()))
FROM tasks
WHERE %(queue)s::text IS NULL OR queue = %(queue)s::text
GROUP BY queue
ORDER BY queue
