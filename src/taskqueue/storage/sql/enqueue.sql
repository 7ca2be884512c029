-- name: task_insert_batch --
-- One statement per batch, its ready-notification included, so one round trip commits both; rows whose (queue, idempotency_key) exists are skipped and resolved by task_find_by_keys.
WITH inserted AS (
    INSERT INTO tasks (id, queue, type, payload, payload_hash, priority, run_at, max_attempts, timeout,
                       backoff_base, backoff_cap, idempotency_key, created_at, updated_at)
    SELECT (t->>0)::uuid, t->>1, t->>2, t->3,
           CASE WHEN t->>10 IS NOT NULL THEN sha256(convert_to((t->3)::text, 'UTF8')) END,
           (t->>4)::smallint,
           coalesce(to_timestamp((t->>5)::float8),
                    coalesce(%(now)s::timestamptz, now()) + make_interval(secs => (t->>6)::float8)),
           (t->>7)::integer, make_interval(secs => (t->>8)::float8),
           make_interval(secs => (t->>9)::float8), make_interval(secs => (t->>11)::float8), t->>10,
           coalesce(%(now)s::timestamptz, now()), coalesce(%(now)s::timestamptz, now())
    -- One JSON array per task: [id, queue, type, payload, priority, run_at epoch, delay s,
    -- max_attempts, timeout s, backoff_base s, idempotency_key, backoff_cap s]. One JSON parameter
    -- is far cheaper to send from Python than a dozen typed arrays.
    FROM jsonb_array_elements(%(tasks)s::jsonb) AS e(t)
    ON CONFLICT (queue, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING id, queue, run_at
), notified AS (
    -- Same message as ready_notifications.notify_ready: "<epoch seconds> <queue>".
    SELECT pg_notify('taskqueue_ready', extract(epoch FROM min(run_at))::text || ' ' || queue)
    FROM inserted
    GROUP BY queue
)
SELECT id, (SELECT count(*) FROM notified) FROM inserted

-- name: task_find_by_keys --
-- Runs after task_insert_batch in its own snapshot, so it sees the row a racing producer committed.
SELECT i.ord, t.id, t.type = i.type AS same_type,
       t.payload_hash = sha256(convert_to(i.payload::jsonb::text, 'UTF8')) AS same_payload
FROM unnest(%(queues)s::text[], %(keys)s::text[], %(types)s::text[], %(payloads)s::text[])
     WITH ORDINALITY AS i(queue, key, type, payload, ord)
JOIN tasks t ON t.queue = i.queue AND t.idempotency_key = i.key

-- name: task_notify_ready --
-- Wakes long-polling Lease calls in every server process; the payload is "<epoch seconds> <queue>".
SELECT pg_notify('taskqueue_ready', n) FROM unnest(%(messages)s::text[]) AS n
