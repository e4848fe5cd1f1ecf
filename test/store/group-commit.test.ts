/**
 * Group commit of parallel completions: outcomes that come back while the ledger writer waits
 * for the disk are written together by its next write, one fsync (one commit) for all of them,
 * each still its own TOOL_RESULT record. Counted on the real file store (node:fs wrapped) and on
 * PostgreSQL (the commits that wait for the WAL flush, counted on the pool).
 */
import path from 'node:path';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { openDatabase } from '../../src/store/pg/pool.ts';
import type { RunStore } from '../../src/store/store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { postgresAvailable, type PostgresServer, startPostgres } from '../helpers/postgres-server.ts';
import { countFileSyncs } from '../helpers/count-file-syncs.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** Read-only calls that all return in the same instant: each waits until all `n` have started. */
function togetherTool(n: number) {
  const runs = new Map<string, number>();
  let started = 0;
  let release!: () => void;
  let all = new Promise<void>((resolve) => (release = resolve));
  const tool = defineTool<{ q: string }>({
    name: 'lookup',
    description: 'read-only',
    inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    readOnly: true,
    run: async ({ q }, ctx) => {
      runs.set(ctx.toolUseId, (runs.get(ctx.toolUseId) ?? 0) + 1);
      const barrier = all;
      if (++started === n) {
        release();
        started = 0;
        all = new Promise<void>((resolve) => (release = resolve));
      }
      await barrier;
      return `answer to ${q}`;
    },
  });
  return { tool, runs };
}

const reply = (n: number) => toolUseReply(Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'lookup', input: { q: `q${i}` } })));

/**
 * Each saved record as "point: syncs", the syncs made since the record before it (a record's
 * own sync comes before its saved event); "(written)": saved without waiting for the disk.
 */
function perRecord(syncs: () => number) {
  const steps: string[] = [];
  let seen = 0;
  const observer = (event: RunEvent) => {
    if (event.type !== 'saved') return;
    const now = syncs();
    steps.push(`${event.point}${event.durable ? '' : ' (written)'}: ${now - seen}`);
    seen = now;
  };
  return { steps, observer };
}


/** The tool phase of the turn: from checkpoint A to checkpoint B (both included). */
const toolPhase = (steps: string[]) => steps.slice(steps.findIndex((s) => s.startsWith('save-a')), steps.findIndex((s) => s.startsWith('save-b')) + 1);
const syncsIn = (steps: string[]) => steps.reduce((sum, step) => sum + Number(step.split(': ')[1]), 0);

afterEach(() => vi.restoreAllMocks());

describe('group commit on the file store', () => {
  it.each([3, 5])('%i read-only calls that finish together: the first entry alone, the others in one unit with checkpoint B (3 fsyncs in the tool phase; one write per outcome took one more per call)', async (n) => {
    const syncs = countFileSyncs();
    const { steps, observer } = perRecord(syncs);
    const { tool, runs } = togetherTool(n);
    const dir = tempDir();
    const store = new FileStore(path.join(dir, '.durable-agent'));
    const result = await startRun({ store, model: scriptedModel([reply(n), endTurnReply('done')]), tools: [tool], task: 't', toolConcurrency: 5, observer });
    store.close();
    expect(result.status).toBe('done');
    expect([...runs.values()]).toEqual(Array(n).fill(1));
    // Checkpoint A; the first outcome alone (the others come back while it waits for the disk);
    // the others together, the turn's last among them, made durable by checkpoint B's fsync.
    const phase = toolPhase(steps);
    expect(phase).toEqual(['save-a: 1', 'effect-write: 1', ...Array(n - 1).fill('effect-write (written): 0'), 'save-b: 1']);
    expect(syncsIn(phase)).toBe(3);
    // Each outcome is its own TOOL_RESULT record; the grouped ones are one unit (each but its last says how many follow).
    const loaded = await new FileStore(path.join(dir, '.durable-agent')).load();
    const entries = loaded.records.filter((r) => r.record.event === 'TOOL_RESULT').map((r) => r.record);
    expect(entries.map((r) => r.results!.add.map((o) => o.tool_use_id))).toEqual(Array.from({ length: n }, (_, i) => [`c${i}`]));
    expect(entries.map((r) => r.more ?? 0)).toEqual([0, ...Array.from({ length: n - 1 }, (_, i) => n - 2 - i)]);
  });

  it('a kill right after a grouped entry keeps the whole unit: the resume reuses every entry and runs nothing again', async () => {
    const dir = tempDir();
    const { tool, runs } = togetherTool(3);
    const store = () => new FileStore(path.join(dir, '.durable-agent'));
    const model = () => scriptedModel([reply(3), endTurnReply('done')]);
    const crashed = await startRun({ store: store(), model: model(), tools: [tool], task: 't', crashAfter: 'after-effect-write:2' }).catch((e: unknown) => e);
    expect(crashed).toBeInstanceOf(SimulatedCrash);
    // The resume's tool returns at once: a call it ran again would not wait for others that never come.
    const again = defineTool<{ q: string }>({ ...tool, run: ({ q }, ctx) => (runs.set(ctx.toolUseId, (runs.get(ctx.toolUseId) ?? 0) + 1), `answer to ${q}`) });
    const events: RunEvent[] = [];
    const result = await resumeRun({ store: store(), model: model(), tools: [again], observer: (event) => events.push(event) });
    expect(result.status).toBe('done');
    expect([...runs.values()]).toEqual([1, 1, 1]);
    expect(events.filter((e) => e.type === 'reconciled').map((e) => e.type === 'reconciled' && e.decision)).toEqual(['reused', 'reused', 'reused']);
  });
});

describe.skipIf(!postgresAvailable())('group commit on PostgreSQL', () => {
  let server: PostgresServer;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgres();
    pool = await openDatabase(server.url, 8);
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    server?.stop();
  });

  /** The pool, counting the appends that commit waiting for the WAL flush (synchronous_commit on). */
  function countingPool(): { pool: pg.Pool; syncedCommits: () => number } {
    let synced = 0;
    const query = (...args: unknown[]) => {
      // A query as text and values, or as one config object (the store's named append statement).
      const [first, second] = args as [unknown, unknown[] | undefined];
      const { text, values } = typeof first === 'object' && first !== null ? (first as { text?: unknown; values?: unknown[] }) : { text: first, values: second };
      if (typeof text === 'string' && text.includes("set_config('synchronous_commit'") && values?.[10] === 'on') synced += 1;
      return (pool.query as (...a: unknown[]) => unknown)(...args);
    };
    const counting = new Proxy(pool, { get: (target, key) => (key === 'query' ? query : Reflect.get(target, key)) });
    return { pool: counting, syncedCommits: () => synced };
  }

  it.each([3, 5])('%i read-only calls that finish together: 3 commits wait for the WAL (A, the first entry, B)', async (n) => {
    const counting = countingPool();
    const { steps, observer } = perRecord(counting.syncedCommits);
    const { tool, runs } = togetherTool(n);
    const store: RunStore = new PgRunStore(counting.pool, `group-${n}`, { leaseMs: 60_000 });
    const result = await startRun({ store, model: scriptedModel([reply(n), endTurnReply('done')]), tools: [tool], task: 't', toolConcurrency: 5, observer });
    expect(result.status).toBe('done');
    expect([...runs.values()]).toEqual(Array(n).fill(1));
    const phase = toolPhase(steps);
    expect(phase).toEqual(['save-a: 1', 'effect-write: 1', ...Array(n - 1).fill('effect-write (written): 0'), 'save-b: 1']);
    expect(syncsIn(phase)).toBe(3);
    const { rows } = await pool.query<{ seq: number; event: string }>(`SELECT seq, body::json->>'event' AS event FROM da_records WHERE run_id = $1 ORDER BY seq`, [`group-${n}`]);
    expect(rows.filter((r) => r.event === 'TOOL_RESULT')).toHaveLength(n);
  });
});
