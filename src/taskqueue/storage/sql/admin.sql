-- name: task_cancel --
-- A queued task is cancelled at once; a leased one is flagged so its worker learns it on the next heartbeat.
UPDATE tasks
SET status = CASE WHEN status = 'queued' THEN 'cancelled' ELSE status END,
    cancel_requested = true,
    finished_at = CASE WHEN status = 'queued' THEN coalesce(%(now)s::timestamptz, now()) END,
    updated_at = coalesce(%(now)s::timestamptz, now())
WHERE id = %(id)s AND status IN ('queued', 'leased')
RETURNING id

-- name: dead_requeue_by_ids --
-- Gives dead tasks a fresh attempt budget; their attempt history stays.
UPDATE tasks
SET status = 'queued', attempts = 0, run_at = coalesce(%(now)s::timestamptz, now()),
    finished_at = NULL, cancel_requested = false,
    updated_at = coalesce(%(now)s::timestamptz, now())
WHERE id = ANY(%(ids)s::uuid[]) AND status = 'dead'
RETURNING id, queue, run_at

-- name: dead_requeue_by_filter --
-- Same as dead_requeue_by_ids for every dead task matching the filter, newest first, up to an optional limit.
WITH picked AS (
    SELECT t.id FROM tasks t
    WHERE t.status = 'dead'
      AND (%(queue)s::text IS NULL OR t.queue = %(queue)s::text)
      AND (%(type)s::text IS NULL OR t.type = %(type)s::text)
      AND (%(error_contains)s::text IS NULL
           OR strpos(lower(t.last_error), lower(%(error_contains)s::text)) > 0)
      AND (%(created_after)s::timestamptz IS NULL OR t.created_at >= %(created_after)s::timestamptz)
      AND (%(created_before)s::timestamptz IS NULL OR t.created_at < %(created_before)s::timestamptz)
    ORDER BY t.finished_at DESC
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE tasks t
SET status = 'queued', attempts = 0, run_at = coalesce(%(now)s::timestamptz, now()),
    finished_at = NULL, cancel_requested = false,
    updated_at = coalesce(%(now)s::timestamptz, now())
FROM picked
WHERE t.id = picked.id
RETURNING t.id, t.queue, t.run_at

-- name: task_purge --
-- Deletes finished tasks of one status matching the filter; their attempts go with them (ON DELETE CASCADE).
WITH gone AS (
    DELETE FROM tasks t
    WHERE t.status = %(status)s::text
      AND (%(queue)s::text IS NULL OR t.queue = %(queue)s::text)
      AND (%(type)s::text IS NULL OR t.type = %(type)s::text)
      AND (%(error_contains)s::text IS NULL
           OR strpos(lower(t.last_error), lower(%(error_contains)s::text)) > 0)
      AND (%(created_after)s::timestamptz IS NULL OR t.created_at >= %(created_after)s::timestamptz)
      AND (%(created_before)s::timestamptz IS NULL OR t.created_at < %(created_before)s::timestamptz)
    RETURNING 1
)
SELECT count(*) FROM gone
