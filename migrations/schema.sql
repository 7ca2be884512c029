-- The schema `alembic upgrade head` yields, as tests/migrations/schema_dump.py describes it.
TABLE alembic_version
  version_num character varying(32) NOT NULL

TABLE task_attempts
  id bigint NOT NULL IDENTITY
  task_id uuid NOT NULL
  attempt integer NOT NULL
  lease_id uuid NOT NULL
  worker_id text NOT NULL
  started_at timestamp with time zone NOT NULL
  ended_at timestamp with time zone NOT NULL
  outcome text NOT NULL
  error text

TABLE tasks
  id uuid NOT NULL DEFAULT gen_random_uuid()
  queue text NOT NULL
  type text NOT NULL
  payload jsonb NOT NULL
  payload_hash bytea
  priority smallint NOT NULL DEFAULT 0
  status text NOT NULL DEFAULT 'queued'::text
  attempts integer NOT NULL DEFAULT 0
  max_attempts integer NOT NULL
  run_at timestamp with time zone NOT NULL DEFAULT now()
  timeout interval NOT NULL
  backoff_base interval NOT NULL
  backoff_cap interval NOT NULL
  lease_id uuid
  lease_owner text
  lease_expires_at timestamp with time zone
  cancel_requested boolean NOT NULL DEFAULT false
  idempotency_key text
  last_error text
  result jsonb
  created_at timestamp with time zone NOT NULL DEFAULT now()
  updated_at timestamp with time zone NOT NULL DEFAULT now()
  started_at timestamp with time zone
  finished_at timestamp with time zone

CONSTRAINT alembic_version.alembic_version_pkc PRIMARY KEY (version_num)
CONSTRAINT task_attempts.task_attempts_error_on_failure CHECK (((outcome = ANY (ARRAY['failed'::text, 'lease_expired'::text])) = (error IS NOT NULL)))
CONSTRAINT task_attempts.task_attempts_ordered CHECK (((ended_at >= started_at) AND (attempt >= 1)))
CONSTRAINT task_attempts.task_attempts_outcome_valid CHECK ((outcome = ANY (ARRAY['succeeded'::text, 'failed'::text, 'lease_expired'::text])))
CONSTRAINT task_attempts.task_attempts_pkey PRIMARY KEY (id)
CONSTRAINT task_attempts.task_attempts_task_id_fkey FOREIGN KEY (task_id) REFERENCES tasks(id) ON DELETE CASCADE
CONSTRAINT tasks.tasks_attempts_within_max CHECK (((attempts >= 0) AND (attempts <= max_attempts) AND (max_attempts >= 1)))
CONSTRAINT tasks.tasks_backoff_ordered CHECK (((backoff_base > '00:00:00'::interval) AND (backoff_base <= backoff_cap)))
CONSTRAINT tasks.tasks_finished_iff_finished_at CHECK (((status = ANY (ARRAY['succeeded'::text, 'dead'::text, 'cancelled'::text])) = (finished_at IS NOT NULL)))
CONSTRAINT tasks.tasks_key_has_hash CHECK (((idempotency_key IS NULL) = (payload_hash IS NULL)))
CONSTRAINT tasks.tasks_leased_has_lease CHECK (((status <> 'leased'::text) OR ((lease_id IS NOT NULL) AND (lease_owner IS NOT NULL) AND (started_at IS NOT NULL) AND (attempts >= 1))))
CONSTRAINT tasks.tasks_leased_iff_lease_expiry CHECK (((status = 'leased'::text) = (lease_expires_at IS NOT NULL)))
CONSTRAINT tasks.tasks_pkey PRIMARY KEY (id)
CONSTRAINT tasks.tasks_status_valid CHECK ((status = ANY (ARRAY['queued'::text, 'leased'::text, 'succeeded'::text, 'dead'::text, 'cancelled'::text])))

CREATE UNIQUE INDEX alembic_version_pkc ON public.alembic_version USING btree (version_num);
CREATE UNIQUE INDEX task_attempts_pkey ON public.task_attempts USING btree (id);
CREATE INDEX task_attempts_task_idx ON public.task_attempts USING btree (task_id, id);
CREATE INDEX tasks_dead_idx ON public.tasks USING btree (queue, finished_at DESC) WHERE (status = 'dead'::text);
CREATE INDEX tasks_dequeue_idx ON public.tasks USING btree (queue, priority DESC, run_at, id) WHERE (status = 'queued'::text);
CREATE UNIQUE INDEX tasks_idempotency_key_idx ON public.tasks USING btree (queue, idempotency_key) WHERE (idempotency_key IS NOT NULL);
CREATE INDEX tasks_lease_expiry_idx ON public.tasks USING btree (lease_expires_at) WHERE (status = 'leased'::text);
CREATE UNIQUE INDEX tasks_pkey ON public.tasks USING btree (id);
