/**
 * The signals inbox of a run in PostgreSQL (da_signals, schema 9): a signal is one row, inserted
 * in one statement; the unique indexes say what a second copy is (see signal-inbox.ts): a row of
 * the same name and id, ever, or of the same name without an id while one waits to be taken. A
 * wait takes the oldest untaken row of its event by setting taken_by to its call in one UPDATE
 * (FOR UPDATE SKIP LOCKED), under the writer's lease: a worker that lost its lease takes nothing.
 * Taken rows stay, the record of which wait took which signal, and go with the run.
 *
 * What a waiting call waits for is written to da_waits before its run lets go of the lease, so a
 * claim (WORKABLE in leases.ts) takes the run up once a signal of that event is there or its time came.
 */
import type { Pool, PoolClient } from 'pg';
import type { ValueOpener, ValueSealer } from '../../seal/value-codec.ts';
import { keptAsRunIs, noKeys } from './pg-keyed-inbox.ts';
import { type ExpectedWake, type Signal, type SignalDelivery, type SignalInbox, signalProblem } from '../inbox/signal-inbox.ts';

interface SignalRow {
  signal: unknown;
  taken_by: string | null;
}

/**
 * The SQL a claim adds for a run that waits (state awaitingDecision) on a wait call: its time
 * came, or a signal of its event waits to be taken. Over da_runs; read by WORKABLE.
 */
export const WAKE_DUE = `EXISTS (SELECT 1 FROM da_waits w WHERE w.run_id = da_runs.id AND w.tool_use_id = da_runs.awaiting
       AND (w.wake_at <= now()
        OR EXISTS (SELECT 1 FROM da_signals s WHERE s.run_id = w.run_id AND s.name = w.event AND s.taken_by IS NULL AND (w.wake_at IS NULL OR s.sent_at < w.wake_at))))`;

export class PgSignalInbox implements SignalInbox {
  constructor(
    private readonly pool: Pool,
    private readonly runId: string,
    /** The writer's lease (its epoch), when this process drives the run (a take is fenced by it). */
    private readonly lease: () => { epoch: number } | null,
    /** The run's sealer and opener for what it keeps outside its records, when it is sealed and loaded (run-sealing.ts: valuesFor), or its key kept before its first record (valuesBeforeCreate). */
    private readonly values: () => Promise<{ sealer: ValueSealer; opener: ValueOpener } | null> = async () => null,
    /** The run's key as its row keeps it (the wrap), opened: for a run sealed in after this store took it for plain (run-sealing.ts: valuesWithWrap). */
    private readonly sealedMeanwhile: (runKey: unknown) => Promise<{ sealer: ValueSealer; opener: ValueOpener }> = noKeys(runId),
  ) {}

  async send(signal: Signal): Promise<SignalDelivery> {
    const insert = async (db: Pool | PoolClient, kept: Signal) =>
      (
        await db.query(
          `INSERT INTO da_signals (run_id, name, signal_id, signal, sent_at) VALUES ($1, $2, $3, $4, to_timestamp($5::double precision / 1000))
           ON CONFLICT DO NOTHING`,
          [this.runId, signal.name, signal.id, JSON.stringify(kept), signal.at],
        )
      ).rowCount;
    const kept = await this.kept(signal);
    // Data kept plain goes in only while the run is still plain, read under its row's lock (keptAsRunIs).
    const rowCount = kept === signal && signal.data !== null
      ? await keptAsRunIs(this.pool, this.runId, async (client, runKey) => insert(client, runKey === null ? signal : await this.keptSealed(signal, runKey)))
      : await insert(this.pool, kept);
    if (rowCount === 1) return { outcome: 'delivered' };
    const { rows } = await this.pool.query<SignalRow>(
      `SELECT signal, taken_by FROM da_signals
        WHERE run_id = $1 AND name = $2 AND ${signal.id === null ? 'signal_id IS NULL AND taken_by IS NULL' : 'signal_id = $3'}`,
      signal.id === null ? [this.runId, signal.name] : [this.runId, signal.name, signal.id],
    );
    const taker = rows[0]?.taken_by ?? null;
    return taker === null ? { outcome: 'waiting' } : { outcome: 'taken', tool_use_id: taker };
  }

  /** A sealed run's signal waits with its data sealed (what it carries is the sender's words); the rest stays readable for the claim. */
  private async kept(signal: Signal): Promise<Signal> {
    const codec = signal.data === null ? null : await this.values();
    return codec ? sealedSignal(signal, codec.sealer) : signal;
  }

  /** For a run found sealed under its row's lock after this store took it for plain (sealed in meanwhile): sealed with its key, or refused naming it. */
  private async keptSealed(signal: Signal, runKey: unknown): Promise<Signal> {
    return sealedSignal(signal, (await this.sealedMeanwhile(runKey)).sealer);
  }

  /** A row's signal, its data opened; null when it is not a whole signal, or is sealed and cannot be opened here. */
  private async whole(row: SignalRow | undefined): Promise<Signal | null> {
    if (!row) return null;
    const kept = row.signal as (Signal & { sealed?: unknown }) | null;
    if (kept === null || typeof kept !== 'object' || !Object.hasOwn(kept, 'sealed')) return wholeSignal(row);
    let codec: Awaited<ReturnType<typeof this.values>>;
    try {
      codec = await this.values();
    } catch {
      return null;
    }
    if (!codec) return null;
    const { sealed: _mark, ...signal } = kept;
    return wholeSignal({ ...row, signal: { ...signal, data: codec.opener.open(signal.data, signalPlace(String(signal.name))) } });
  }

  async takenBy(tool_use_id: string): Promise<Signal | null> {
    const { rows } = await this.pool.query<SignalRow>('SELECT signal, taken_by FROM da_signals WHERE run_id = $1 AND taken_by = $2 ORDER BY seq LIMIT 1', [this.runId, tool_use_id]);
    return this.whole(rows[0]);
  }

  async take(name: string, tool_use_id: string, before: number): Promise<Signal | null> {
    const lease = this.lease();
    const { rows } = await this.pool.query<SignalRow>(
      `UPDATE da_signals SET taken_by = $3
        WHERE seq = (SELECT seq FROM da_signals
                      WHERE run_id = $1 AND name = $2 AND taken_by IS NULL AND sent_at < to_timestamp($4::double precision / 1000)
                      ORDER BY sent_at, seq LIMIT 1 FOR UPDATE SKIP LOCKED)
          ${lease ? 'AND EXISTS (SELECT 1 FROM da_runs WHERE id = $1 AND lease_epoch = $5)' : ''}
        RETURNING signal, taken_by`,
      lease ? [this.runId, name, tool_use_id, finite(before), lease.epoch] : [this.runId, name, tool_use_id, finite(before)],
    );
    return this.whole(rows[0]);
  }

  async waiting(): Promise<Signal[]> {
    const { rows } = await this.pool.query<SignalRow>('SELECT signal, taken_by FROM da_signals WHERE run_id = $1 AND taken_by IS NULL ORDER BY sent_at, seq', [this.runId]);
    return (await Promise.all(rows.map((row) => this.whole(row)))).filter((signal): signal is Signal => signal !== null);
  }

  async expect(wake: ExpectedWake): Promise<void> {
    await this.pool.query(
      `INSERT INTO da_waits (run_id, tool_use_id, event, wake_at) VALUES ($1, $2, $3, to_timestamp($4::double precision / 1000))
       ON CONFLICT (run_id, tool_use_id) DO UPDATE SET event = EXCLUDED.event, wake_at = EXCLUDED.wake_at`,
      [this.runId, wake.tool_use_id, wake.event, wake.wakeAt],
    );
  }
}

/** Where a signal's data is bound, beside its run: its event's name (a value moved to another event fails its check). */
function signalPlace(name: string): string {
  return `inbox-signal/${name}.data`;
}

/** A signal as a sealed run keeps it: its data sealed, with the mark; its name, id and sender stay readable (a claim looks for them). One without data is kept as it is. */
export function sealedSignal<S extends { name: string; data: unknown }>(signal: S, sealer: ValueSealer): S {
  if (signal.data === null) return signal;
  return { ...signal, data: sealer.seal(signal.data, signalPlace(signal.name)), sealed: sealer.keyId };
}

function wholeSignal(row: SignalRow | undefined): Signal | null {
  return row && signalProblem(row.signal) === null ? (row.signal as Signal) : null;
}

/** An instant PostgreSQL can compare with (a wait with no deadline takes a signal sent at any time). */
function finite(at: number): number {
  return Number.isFinite(at) ? at : 8.64e15;
}
