/**
 * The PostgreSQL schema, created and migrated by the program itself (`durable-agent db migrate`,
 * and on first use). Each migration runs once, in order, under an advisory lock so that workers
 * starting together do not race; the schema version is recorded in da_schema.
 */
import type { Pool } from 'pg';
import { SchemaVersionError } from './pg-errors.ts';
import { inTransaction } from './transaction.ts';

export const SCHEMA_VERSION = 18;

/** A row's state changed into one a run rests in: ended, waiting for a person, stopped at a limit. */
const CAME_TO_REST = `NEW.state IS DISTINCT FROM OLD.state
            AND NEW.state IN ('done', 'failed', 'cancelled', 'awaitingDecision', 'stoppedAtMaxTurns', 'stoppedAtBudget')`;

/**
 * Applied steps are never edited, with one exception: step 1 made the fleet demo's tables
 * (demo_reports, demo_report_audit) until the demo made them itself, IF NOT EXISTS
 * (demo-tables.ts). A database migrated before keeps them and their rows; a new one has them
 * once the demo is used. No step drops them: they hold what the demo did to the outside world.
 */
const MIGRATIONS: Record<number, string> = {
  1: `
    CREATE TABLE da_runs (
      id               text PRIMARY KEY,
      spec             jsonb NOT NULL,
      header           jsonb,
      state            text NOT NULL DEFAULT 'queued',
      turn             integer NOT NULL DEFAULT 0,
      records          integer NOT NULL DEFAULT 0,
      finished         boolean NOT NULL DEFAULT false,
      lease_owner      text,
      lease_epoch      bigint NOT NULL DEFAULT 0,
      lease_expires_at timestamptz,
      created_at       timestamptz NOT NULL DEFAULT now(),
      updated_at       timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX da_runs_claimable ON da_runs (created_at) WHERE NOT finished;
    CREATE TABLE da_records (
      run_id     text NOT NULL REFERENCES da_runs (id) ON UPDATE CASCADE ON DELETE CASCADE,
      seq        integer NOT NULL,
      epoch      bigint NOT NULL,
      body       text NOT NULL,
      bytes      integer NOT NULL,
      written_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (run_id, seq)
    );
  `,
  // A person in the loop: the decisions inbox, and what a waiting run waits for, so
  // that a claim can leave it alone until a decision for that call (or its deadline) is there.
  2: `
    CREATE TABLE da_decisions (
      run_id      text NOT NULL REFERENCES da_runs (id) ON UPDATE CASCADE ON DELETE CASCADE,
      tool_use_id text NOT NULL,
      decision    jsonb NOT NULL,
      written_at  timestamptz NOT NULL DEFAULT now(),
      settled_at  timestamptz,
      PRIMARY KEY (run_id, tool_use_id)
    );
    ALTER TABLE da_runs ADD COLUMN awaiting text, ADD COLUMN awaiting_since timestamptz;
  `,
  // Snapshot records: the run's last one, so that a resume reads only from there.
  3: `
    ALTER TABLE da_runs ADD COLUMN snapshot_seq integer NOT NULL DEFAULT 0;
  `,
  // Cancel and pause: requests for the worker that drives a run; a paused run is not claimed.
  4: `
    CREATE TABLE da_controls (
      run_id     text NOT NULL REFERENCES da_runs (id) ON UPDATE CASCADE ON DELETE CASCADE,
      kind       text NOT NULL CHECK (kind IN ('cancel', 'pause')),
      request    jsonb NOT NULL,
      written_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (run_id, kind)
    );
  `,
  // Claim latency: a NOTIFY on channel da_work when a run may have become claimable (queued,
  // its lease released while unfinished, a decision given, a pause cleared), whoever wrote it, so
  // that idle workers LISTENing wake at once instead of at their next poll (src/fleet/work-signal.ts).
  // Sent at commit, once per transaction; the appends of a run fire none of them.
  5: `
    CREATE FUNCTION da_work_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('da_work', '');
        RETURN NULL;
      END
    $$;
    CREATE TRIGGER da_runs_queued AFTER INSERT ON da_runs FOR EACH STATEMENT EXECUTE FUNCTION da_work_notify();
    CREATE TRIGGER da_runs_released AFTER UPDATE OF lease_owner ON da_runs
      FOR EACH ROW WHEN (NEW.lease_owner IS NULL AND NOT NEW.finished) EXECUTE FUNCTION da_work_notify();
    CREATE TRIGGER da_decisions_given AFTER INSERT ON da_decisions FOR EACH STATEMENT EXECUTE FUNCTION da_work_notify();
    CREATE TRIGGER da_controls_cleared AFTER DELETE ON da_controls FOR EACH STATEMENT EXECUTE FUNCTION da_work_notify();
  `,
  // A run stopped at a limit is stopped, not finished: it rests unclaimed until an operator
  // raises the limit (`durable-agent raise`), a request of kind 'raise' that makes it claimable
  // and wakes the workers. Runs stopped at a limit before this version become resumable so too.
  6: `
    ALTER TABLE da_controls DROP CONSTRAINT da_controls_kind_check;
    ALTER TABLE da_controls ADD CONSTRAINT da_controls_kind_check CHECK (kind IN ('cancel', 'pause', 'raise'));
    CREATE TRIGGER da_controls_raised AFTER INSERT ON da_controls
      FOR EACH ROW WHEN (NEW.kind = 'raise') EXECUTE FUNCTION da_work_notify();
    UPDATE da_runs SET finished = false
     WHERE finished AND state IN ('stoppedAtMaxTurns', 'stoppedAtBudget') AND id NOT LIKE '%~archived~%';
  `,
  // What drives a run: the definitions workers have registered (name and version), so that a
  // run that waits for a version no worker has is said to; and a NOTIFY on channel da_rest,
  // with the run's id, when a run comes to rest (ended, waiting for a person, stopped at a
  // limit), so that a caller waiting for a run's result wakes at once instead of polling.
  7: `
    CREATE TABLE da_agents (
      name        text NOT NULL,
      version     text NOT NULL,
      first_seen  timestamptz NOT NULL DEFAULT now(),
      last_seen   timestamptz NOT NULL DEFAULT now(),
      last_worker text,
      PRIMARY KEY (name, version)
    );
    CREATE FUNCTION da_rest_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('da_rest', NEW.id);
        RETURN NULL;
      END
    $$;
    CREATE TRIGGER da_runs_rested AFTER UPDATE OF state ON da_runs FOR EACH ROW
      WHEN (${CAME_TO_REST})
      EXECUTE FUNCTION da_rest_notify();
  `,
  // Webhooks: an outbox row for each time a run comes to rest, written by a trigger in the very
  // transaction that moved the run, so that no change that committed goes without its event and
  // none that rolled back has one. Workers deliver them (src/fleet/webhooks.ts); event_id is what
  // a receiver deduplicates on, since a delivery may be made more than once.
  8: `
    CREATE TABLE da_events (
      id              bigserial PRIMARY KEY,
      event_id        uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
      run_id          text NOT NULL REFERENCES da_runs (id) ON UPDATE CASCADE ON DELETE CASCADE,
      type            text NOT NULL,
      state           text NOT NULL,
      at              timestamptz NOT NULL DEFAULT now(),
      attempts        integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      delivered_at    timestamptz,
      last_error      text
    );
    CREATE INDEX da_events_due ON da_events (next_attempt_at) WHERE delivered_at IS NULL;
    CREATE FUNCTION da_event_record() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO da_events (run_id, type, state) VALUES (
          NEW.id,
          CASE NEW.state
            WHEN 'awaitingDecision' THEN 'run.waiting'
            WHEN 'stoppedAtBudget' THEN 'run.budget_reached'
            WHEN 'stoppedAtMaxTurns' THEN 'run.max_turns_reached'
            ELSE 'run.' || NEW.state
          END,
          NEW.state);
        RETURN NULL;
      END
    $$;
    CREATE TRIGGER da_runs_event AFTER UPDATE OF state ON da_runs FOR EACH ROW
      WHEN (${CAME_TO_REST})
      EXECUTE FUNCTION da_event_record();
  `,
  // Durable waits: signals sent to a run (durable-agent signal), each taken once by the wait call
  // that binds it (taken_by); a signal with the sender's id is unique by name and id for ever, one
  // without is unique by name while it waits to be taken. And what a waiting call waits for
  // (da_waits: its event, the time it ends), written by the run's writer before it lets go of the
  // run, so that a claim takes the run up when the time or a signal comes; a signal wakes workers.
  9: `
    CREATE TABLE da_signals (
      seq       bigserial PRIMARY KEY,
      run_id    text NOT NULL REFERENCES da_runs (id) ON UPDATE CASCADE ON DELETE CASCADE,
      name      text NOT NULL,
      signal_id text,
      signal    jsonb NOT NULL,
      sent_at   timestamptz NOT NULL DEFAULT now(),
      taken_by  text
    );
    CREATE UNIQUE INDEX da_signals_by_id ON da_signals (run_id, name, signal_id) WHERE signal_id IS NOT NULL;
    CREATE UNIQUE INDEX da_signals_one_waiting ON da_signals (run_id, name) WHERE signal_id IS NULL AND taken_by IS NULL;
    CREATE INDEX da_signals_untaken ON da_signals (run_id, name, seq) WHERE taken_by IS NULL;
    CREATE TABLE da_waits (
      run_id      text NOT NULL REFERENCES da_runs (id) ON UPDATE CASCADE ON DELETE CASCADE,
      tool_use_id text NOT NULL,
      event       text,
      wake_at     timestamptz,
      PRIMARY KEY (run_id, tool_use_id)
    );
    CREATE TRIGGER da_signals_sent AFTER INSERT ON da_signals FOR EACH STATEMENT EXECUTE FUNCTION da_work_notify();
  `,
  // Runs queued by a run's call (a sub-agent's child, driven by any worker): which run waits for
  // which, written by the waiting run before it lets go of its lease, so that a claim leaves the
  // waiting run alone until its child has ended; the end of such a child wakes workers. No key to
  // da_runs for the child: the note may be written before the child's row (a kill between the
  // two is mended by the next take-up), and a child missing lets the parent be taken up to look.
  10: `
    CREATE TABLE da_child_waits (
      run_id       text NOT NULL REFERENCES da_runs (id) ON UPDATE CASCADE ON DELETE CASCADE,
      child_run_id text NOT NULL,
      PRIMARY KEY (run_id, child_run_id)
    );
    CREATE TRIGGER da_runs_child_ended AFTER UPDATE OF finished ON da_runs
      FOR EACH ROW WHEN (NEW.finished AND NOT OLD.finished AND NEW.spec ? 'calledBy') EXECUTE FUNCTION da_work_notify();
  `,
  // A call that waits for its child gives up at a time (the sub-agent tool's timeoutMs from the
  // first queueing): from then on the waiting run is claimable again, and its call ends with an
  // error the model reads while the child goes on, as on one machine. Null: it waits for ever.
  11: `
    ALTER TABLE da_child_waits ADD COLUMN give_up_at timestamptz;
  `,
  // Webhook events belong to an endpoint: the endpoints workers were started with (a hash of the
  // URL without its credentials, and its origin for what an operator reads) are kept, and a run
  // coming to rest writes one event for each endpoint known then. A worker sends only the events
  // of its own endpoint: an event made for one URL never goes to another. Events written before
  // this step name none (endpoint null): no worker sends them, since which URL they were for was
  // never recorded.
  12: `
    CREATE TABLE da_webhook_endpoints (
      endpoint      text PRIMARY KEY,
      origin        text NOT NULL,
      registered_at timestamptz NOT NULL DEFAULT now()
    );
    ALTER TABLE da_events ADD COLUMN endpoint text;
    CREATE INDEX da_events_due_by_endpoint ON da_events (endpoint, next_attempt_at) WHERE delivered_at IS NULL;
    CREATE OR REPLACE FUNCTION da_event_record() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO da_events (run_id, type, state, endpoint)
          SELECT NEW.id,
                 CASE NEW.state
                   WHEN 'awaitingDecision' THEN 'run.waiting'
                   WHEN 'stoppedAtBudget' THEN 'run.budget_reached'
                   WHEN 'stoppedAtMaxTurns' THEN 'run.max_turns_reached'
                   ELSE 'run.' || NEW.state
                 END,
                 NEW.state, w.endpoint
            FROM da_webhook_endpoints w;
        RETURN NULL;
      END
    $$;
  `,
  // A fleet of a million runs, mostly finished: indexes that match what is asked of it (a state's
  // runs in the queue's order, the newest saves first, a run's children, one page after another
  // by a cursor), and the count of finished runs by state kept as they finish, so that the
  // console's counts read the unfinished runs only. The count is spread over 16 rows a state
  // (by the run's id) so that runs ending at once do not queue for one row; archived runs are
  // not counted, as no list shows them.
  13: `
    CREATE INDEX da_runs_queue_order ON da_runs (created_at, id);
    CREATE INDEX da_runs_by_state ON da_runs (state, created_at, id);
    CREATE INDEX da_runs_newest ON da_runs (updated_at DESC, id);
    CREATE INDEX da_runs_by_state_newest ON da_runs (state, updated_at DESC, id);
    CREATE INDEX da_runs_called_by ON da_runs ((spec #>> '{calledBy,runId}')) WHERE spec ? 'calledBy';
    CREATE INDEX da_runs_finished_by_age ON da_runs (updated_at, id) WHERE finished;
    CREATE TABLE da_finished_counts (
      state text NOT NULL,
      shard smallint NOT NULL,
      runs  bigint NOT NULL,
      PRIMARY KEY (state, shard)
    );
    INSERT INTO da_finished_counts (state, shard, runs)
      SELECT state, hashtext(id) & 15, count(*) FROM da_runs WHERE finished AND id NOT LIKE '%~archived~%' GROUP BY 1, 2;
    CREATE FUNCTION da_finished_count() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.finished AND OLD.id NOT LIKE '%~archived~%' THEN
          INSERT INTO da_finished_counts AS f (state, shard, runs) VALUES (OLD.state, hashtext(OLD.id) & 15, -1)
            ON CONFLICT (state, shard) DO UPDATE SET runs = f.runs - 1;
        END IF;
        IF NEW.finished AND NEW.id NOT LIKE '%~archived~%' THEN
          INSERT INTO da_finished_counts AS f (state, shard, runs) VALUES (NEW.state, hashtext(NEW.id) & 15, 1)
            ON CONFLICT (state, shard) DO UPDATE SET runs = f.runs + 1;
        END IF;
        RETURN NULL;
      END
    $$;
    -- Rows inserted or deleted together (a prune's batch, a fork) are counted once a statement,
    -- each (state, shard) once: a row updated many times in one transaction leaves as many versions.
    CREATE FUNCTION da_finished_count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO da_finished_counts AS f (state, shard, runs)
            SELECT state, hashtext(id) & 15, count(*) FROM changed WHERE finished AND id NOT LIKE '%~archived~%' GROUP BY 1, 2
            ON CONFLICT (state, shard) DO UPDATE SET runs = f.runs + EXCLUDED.runs;
        ELSE
          INSERT INTO da_finished_counts AS f (state, shard, runs)
            SELECT state, hashtext(id) & 15, -count(*) FROM changed WHERE finished AND id NOT LIKE '%~archived~%' GROUP BY 1, 2
            ON CONFLICT (state, shard) DO UPDATE SET runs = f.runs + EXCLUDED.runs;
        END IF;
        RETURN NULL;
      END
    $$;
    CREATE TRIGGER da_runs_finished_inserted AFTER INSERT ON da_runs REFERENCING NEW TABLE AS changed
      FOR EACH STATEMENT EXECUTE FUNCTION da_finished_count_rows();
    CREATE TRIGGER da_runs_finished_deleted AFTER DELETE ON da_runs REFERENCING OLD TABLE AS changed
      FOR EACH STATEMENT EXECUTE FUNCTION da_finished_count_rows();
    CREATE TRIGGER da_runs_finished_changed AFTER UPDATE OF finished, state, id ON da_runs FOR EACH ROW
      WHEN ((OLD.finished OR NEW.finished) AND (OLD.finished, OLD.state, OLD.id) IS DISTINCT FROM (NEW.finished, NEW.state, NEW.id))
      EXECUTE FUNCTION da_finished_count();
  `,
  // Schedules: each tick starts one run whose id is made of the schedule's name and the tick, so
  // that however many workers fire it, and whatever is killed when, a tick starts one run. The
  // next tick moves on in the transaction that queues the tick's runs.
  14: `
    CREATE TABLE da_schedules (
      name         text PRIMARY KEY,
      agent        text NOT NULL,
      task         text NOT NULL,
      cron         text NOT NULL,
      timezone     text NOT NULL,
      catch_up     integer NOT NULL,
      overlap      boolean NOT NULL,
      run_options  jsonb NOT NULL DEFAULT '{}',
      paused       boolean NOT NULL DEFAULT false,
      next_tick_at timestamptz,
      last_tick_at timestamptz,
      last_run_id  text,
      started      bigint NOT NULL DEFAULT 0,
      skipped      bigint NOT NULL DEFAULT 0,
      created_at   timestamptz NOT NULL DEFAULT now(),
      updated_at   timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX da_schedules_due ON da_schedules (next_tick_at) WHERE NOT paused;
  `,
  // Tenants: whose each run is (its spec's, else 'default'), kept in a column of its own so that
  // a claim shares the fleet among the tenants with work; and each tenant's share (its weight)
  // and the most of its runs driven at once, set at run time.
  15: `
    ALTER TABLE da_runs ADD COLUMN tenant text GENERATED ALWAYS AS (coalesce(spec ->> 'tenant', 'default')) STORED;
    CREATE INDEX da_runs_unfinished_by_tenant ON da_runs (tenant, created_at, id) WHERE NOT finished;
    CREATE TABLE da_tenants (
      name        text PRIMARY KEY,
      weight      integer NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 1000),
      max_running integer CHECK (max_running >= 1),
      updated_at  timestamptz NOT NULL DEFAULT now()
    );
  `,
  // Tenant quotas and rate limits: a month's spend (cost at list prices and tokens) charged in
  // the statement that writes the record carrying a reply's usage, so a record is charged once
  // whatever is killed when; and a fixed window of model calls and tokens, shared by the workers.
  16: `
    ALTER TABLE da_tenants
      ADD COLUMN max_cost_usd_month  numeric CHECK (max_cost_usd_month > 0),
      ADD COLUMN max_tokens_month    bigint CHECK (max_tokens_month >= 1),
      ADD COLUMN max_requests_minute integer CHECK (max_requests_minute >= 1),
      ADD COLUMN max_tokens_minute   bigint CHECK (max_tokens_minute >= 1);
    CREATE TABLE da_tenant_spend (
      tenant     text NOT NULL,
      month      date NOT NULL,
      cost_usd   numeric NOT NULL DEFAULT 0,
      tokens     bigint NOT NULL DEFAULT 0,
      replies    bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant, month)
    );
    CREATE TABLE da_tenant_window (
      tenant       text PRIMARY KEY,
      window_start timestamptz NOT NULL,
      requests     integer NOT NULL DEFAULT 0,
      tokens       bigint NOT NULL DEFAULT 0
    );
  `,
  // Sealed runs: a run's data key, wrapped by a master key the user holds, in its row. Null for
  // a plain run and for a shredded one; a rotation rewrites it, never the run's records.
  17: `
    ALTER TABLE da_runs ADD COLUMN run_key jsonb;
  `,
  // Sealed schedules: the data key a schedule's task is sealed with, wrapped by a master key, in
  // its row. Null for a plain schedule; a rotation rewrites it, and it goes with the schedule.
  18: `
    ALTER TABLE da_schedules ADD COLUMN task_key jsonb;
  `,
};

export interface MigrationResult {
  from: number;
  to: number;
}

/** `upTo`: stop at that version (tests of a migration from an older schema). */
export async function migrate(pool: Pool, upTo = SCHEMA_VERSION): Promise<MigrationResult> {
  return inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('durable-agent schema'))");
    await client.query('CREATE TABLE IF NOT EXISTS da_schema (version integer PRIMARY KEY, migrated_at timestamptz NOT NULL DEFAULT now())');
    const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM da_schema');
    const from = rows[0]?.version ?? 0;
    if (from > SCHEMA_VERSION) throw new SchemaVersionError(from, SCHEMA_VERSION);
    for (let version = from + 1; version <= upTo; version++) {
      await client.query(MIGRATIONS[version]!);
      await client.query('INSERT INTO da_schema (version) VALUES ($1)', [version]);
    }
    return { from, to: Math.max(from, upTo) };
  });
}
