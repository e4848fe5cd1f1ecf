/**
 * npm run bench:pg [-- --quick] [--turns N] [--rounds N] [--no-dbos]
 *
 * PostgreSQL near its floor: the cost of a turn of our loop on the PostgreSQL store beside what
 * the server alone charges for the same durability, and beside DBOS Transact, measured in one
 * sequence on one throwaway cluster, the contenders taking turns round after round:
 *
 * - the floor: our run's records INSERTed with no logic, one statement and one commit for each of
 *   our run's durable points (a commit that waits for the WAL flush, with the records our run
 *   committed without waiting since the one before): the same rows, the same bytes, the same
 *   durable points;
 * - ours: our loop (bench/workload.ts, a scripted model) driving a PgRunStore for T turns, the
 *   run's lease claimed and released by the store as a program driving a run does;
 * - DBOS Transact (optional): a workflow with one step per turn returning that turn's bytes, and
 *   the same with one step per durable point of ours (as an agent loop on DBOS would checkpoint
 *   the model's reply and the tool's result each), installed on demand outside the repository
 *   (pg/dbos.ts); skipped, said why, when it cannot be.
 *
 * For each: ms per turn (wall), statements per turn (pg_stat_statements calls in that contender's
 * database: node-postgres does not pipeline, so each is a round trip) and WAL bytes per turn
 * (pg_current_wal_insert_lsn before and after, a checkpoint first so that each starts alike).
 * The cluster (PostgreSQL binaries from /usr/lib/postgresql/<v>/bin, or DURABLE_AGENT_PG_BIN) runs
 * with autovacuum off and checkpoints only on demand, so that neither lands in a contender's
 * figures; it is removed on every way out (exit-cleanup.ts). Writes bench/results/pg.json.
 */
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startRun } from '../src/runtime/run-api.ts';
import type { JournalRecord } from '../src/store/journal/journal-record.ts';
import { PgRunStore } from '../src/store/pg/pg-store.ts';
import { openDatabase, openPool } from '../src/store/pg/pool.ts';
import { describeCheckout } from './git-tree.ts';
import { parsePgBenchArgs, PgBenchUsageError } from './pg/args.ts';
import { BenchCluster } from './pg/cluster.ts';
import { type DbosContender, DbosUnavailableError, startDbos } from './pg/dbos.ts';
import { figuresOf, type PgBenchReport, type PgContender, type PgSample, pgReportLines } from './pg/report.ts';
import { benchRunOptions, benchScript } from './workload.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const RESULTS = fileURLToPath(new URL('./results/pg.json', import.meta.url));
const log = (line: string) => process.stderr.write(`${line}\n`);

/** One commit of our run: the records it wrote, and whether it waited for the WAL flush. */
interface Commit {
  bodies: string[];
  synced: boolean;
}

/** What our run wrote: its commits, in order, and each record by the turn it belongs to. */
interface RunPlan {
  commits: Commit[];
  records: JournalRecord[];
}

/** Our run's durable points, each one synced commit of the records committed since the last one (with or without waiting). */
function durablePointsOf(commits: readonly Commit[]): Commit[] {
  const points: Commit[] = [];
  let open: string[] = [];
  for (const commit of commits) {
    open.push(...commit.bodies);
    if (commit.synced) {
      points.push({ bodies: open, synced: true });
      open = [];
    }
  }
  if (open.length > 0) points.push({ bodies: open, synced: true });
  return points;
}

/** The statements pg's clients in this process send while `watching`: our store's, seen from its side. */
const sent: Array<{ text: string; values: unknown[] }> = [];
let watching = false;
function watchStatements(): void {
  const query = pg.Client.prototype.query;
  (pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    if (watching) {
      const first = args[0] as string | { text?: string; values?: unknown[] } | undefined;
      const text = typeof first === 'string' ? first : (first?.text ?? '');
      const values = typeof first === 'string' ? ((Array.isArray(args[1]) ? args[1] : []) as unknown[]) : (first?.values ?? []);
      sent.push({ text: text.replace(/\s+/g, ' ').trim(), values });
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  };
}

/** Whether a statement that wrote records waited for the WAL flush: as it set synchronous_commit, else the server's default (on). */
function syncedBy(statement: { text: string; values: unknown[] }): boolean {
  const set = /set_config\('synchronous_commit', \$(\d+)/.exec(statement.text);
  return set ? statement.values[Number(set[1]) - 1] !== 'off' : true;
}

/** A statement's first words, to say which statements a turn took. */
const headOf = (text: string) => text.slice(0, 48);

let runs = 0;

/** One run of our loop on a PgRunStore; its sample, and what it wrote (read back and seen sent). */
async function measureOurs(cluster: BenchCluster, pool: pg.Pool, turns: number): Promise<{ sample: PgSample; plan: RunPlan; byStatement: Map<string, number> }> {
  const runId = `bench-${++runs}`;
  const script = benchScript(turns);
  const store = new PgRunStore(pool, runId, { leaseMs: 60_000 });
  sent.length = 0;
  const done = await cluster.begin('bench_ours');
  watching = true;
  const result = await startRun(benchRunOptions(store, script));
  watching = false;
  const sample = await done();
  if (result.status !== 'done' || result.turn !== turns) throw new Error(`our run ended ${result.status} at turn ${result.turn} of ${turns}`);
  const byStatement = new Map<string, number>();
  for (const statement of sent) byStatement.set(headOf(statement.text), (byStatement.get(headOf(statement.text)) ?? 0) + 1);
  // Records committed together share their transaction's now() (written_at): one group a commit.
  const { rows } = await pool.query<{ body: string; at: string }>('SELECT body, written_at::text AS at FROM da_records WHERE run_id = $1 ORDER BY seq', [runId]);
  const groups: string[][] = [];
  rows.forEach((row, index) => {
    if (index === 0 || row.at !== rows[index - 1]!.at) groups.push([]);
    groups.at(-1)!.push(row.body);
  });
  const writes = sent.filter((statement) => statement.text.includes('INSERT INTO da_records'));
  if (writes.length !== groups.length) throw new Error(`our run made ${groups.length} commits of records but ${writes.length} statements that write them were seen`);
  const commits = groups.map((bodies, index) => ({ bodies, synced: syncedBy(writes[index]!) }));
  return { sample, plan: { commits, records: rows.map((row) => JSON.parse(row.body) as JournalRecord) }, byStatement };
}

/**
 * The floor: the plan's rows, one INSERT and one commit for each durable point (its commit waits
 * for the WAL flush), no logic. Given our commits instead (the diagnostic floor), one for each
 * of ours, synchronous_commit as ours had it: what is left of our cost beside it is our own.
 */
async function measureFloor(cluster: BenchCluster, pool: pg.Pool, commits: readonly Commit[]): Promise<PgSample> {
  const runId = `floor-${++runs}`;
  const client = await pool.connect();
  try {
    const done = await cluster.begin('bench_floor');
    let seq = 0;
    for (const { bodies, synced } of commits) {
      const seqs = bodies.map(() => seq++);
      await client.query(
        `INSERT INTO floor_records (run_id, seq, epoch, body, bytes)
         SELECT $1, r.seq, 1, r.body, r.bytes FROM unnest($2::integer[], $3::text[], $4::integer[]) AS r(seq, body, bytes)
          WHERE set_config('synchronous_commit', $5, true) IS NOT NULL`,
        [runId, seqs, bodies, bodies.map((body) => Buffer.byteLength(body)), synced ? 'on' : 'off'],
      );
    }
    return await done();
  } finally {
    client.release();
  }
}

/** Each turn's payload for DBOS: the bodies of the records of that turn (those before turn 1 with it, those after T with T). */
function payloadsOf(plan: RunPlan, turns: number): string[] {
  const byTurn: string[][] = Array.from({ length: turns }, () => []);
  for (const record of plan.records) byTurn[Math.min(Math.max((record.turn ?? 1) - 1, 0), turns - 1)]!.push(JSON.stringify(record));
  return byTurn.map((bodies) => bodies.join('\n'));
}

async function main(): Promise<void> {
  let args: ReturnType<typeof parsePgBenchArgs>;
  try {
    args = parsePgBenchArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof PgBenchUsageError)) throw error;
    log(error.message);
    process.exitCode = 2;
    return;
  }
  const started = Date.now();
  const loadAtStart = os.loadavg()[0]!;
  const cluster = await BenchCluster.start();
  watchStatements();
  const oursPool = await openDatabase(await cluster.createDatabase('bench_ours'), 4);
  const floorPool = openPool(await cluster.createDatabase('bench_floor'), 1);
  let dbos: DbosContender | null = null;
  let dbosSkipped: string | null = args.dbos ? null : 'not asked for (--no-dbos)';
  try {
    await migrateFloorTable(floorPool);
    if (args.dbos) {
      try {
        dbos = await startDbos(cluster.urlOf('bench_dbos'), log);
      } catch (error) {
        if (!(error instanceof DbosUnavailableError)) throw error;
        dbosSkipped = error.why;
        log(`DBOS Transact skipped: ${error.why}`);
      }
    }
    const version = await cluster.version();
    log(`bench:pg: ${version}; ${args.turns} turns a run, ${args.rounds} round(s)${dbos ? `, DBOS Transact ${dbos.version}` : ''}`);
    // Warm-up, not counted: each contender once (a fresh process is still compiling), and the plan the floor replays.
    const warm = await measureOurs(cluster, oursPool, args.turns);
    const plan = warm.plan;
    const points = durablePointsOf(plan.commits);
    const payloads = { dbos: payloadsOf(plan, args.turns), dbosPoints: points.map((point) => point.bodies.join('\n')) };
    await measureFloor(cluster, floorPool, points);
    if (dbos) for (const variant of ['dbos', 'dbosPoints'] as const) await measureDbos(cluster, dbos, payloads[variant]);
    await measureFloor(cluster, floorPool, plan.commits);
    const samples: Record<PgContender, PgSample[]> = { floor: [], floorCommits: [], ours: [], dbos: [], dbosPoints: [] };
    let byStatement = warm.byStatement;
    const order: PgContender[] = ['floor', 'floorCommits', 'ours', ...(dbos ? (['dbos', 'dbosPoints'] as const) : [])];
    for (let round = 0; round < args.rounds; round++) {
      for (let i = 0; i < order.length; i++) {
        const contender = order[(round + i) % order.length]!;
        if (contender === 'ours') {
          const measured = await measureOurs(cluster, oursPool, args.turns);
          samples.ours.push(measured.sample);
          byStatement = measured.byStatement;
        } else if (contender === 'floor' || contender === 'floorCommits') {
          samples[contender].push(await measureFloor(cluster, floorPool, contender === 'floor' ? points : plan.commits));
        } else {
          samples[contender].push(await measureDbos(cluster, dbos!, payloads[contender]));
        }
      }
      log(`  round ${round + 1}: ${order.map((c) => `${c} ${(samples[c].at(-1)!.ms / args.turns).toFixed(3)} ms/turn`).join(', ')}`);
    }
    const bytes = plan.commits.reduce((sum, commit) => sum + commit.bodies.reduce((n, body) => n + Buffer.byteLength(body), 0), 0);
    const report: PgBenchReport = {
      setting: `bench:pg: ${version}, its own cluster (autovacuum off, checkpoints on demand); ${describeCheckout(REPO)}; node ${process.version}, ${os.cpus().length} cores; load average ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end; ${Math.round((Date.now() - started) / 1000)} s`,
      turns: args.turns,
      recordsPerTurn: plan.records.length / args.turns,
      commitsPerTurn: plan.commits.length / args.turns,
      durablePointsPerTurn: points.length / args.turns,
      bytesPerTurn: bytes / args.turns,
      figures: order.filter((c) => samples[c].length > 0).map((c) => figuresOf(c, samples[c], args.turns)),
      dbosSkipped,
      oursByStatement: Object.fromEntries([...byStatement].sort((a, b) => b[1] - a[1]).map(([head, n]) => [head, n / args.turns])),
    };
    const lines = pgReportLines(report);
    process.stdout.write(`${lines.join('\n')}\n`);
    fs.mkdirSync(fileURLToPath(new URL('./results', import.meta.url)), { recursive: true });
    fs.writeFileSync(RESULTS, `${JSON.stringify({ generatedAt: new Date().toISOString(), report, samples }, null, 2)}\n`);
    log(`figures written to bench/results/pg.json`);
  } finally {
    await dbos?.stop().catch((error: unknown) => log(`DBOS did not shut down cleanly: ${(error as Error).message}`));
    await Promise.all([oursPool.end(), floorPool.end(), cluster.admin.end()]).catch(() => {});
  }
}

/** The floor's table: da_records' columns and key (no foreign key: there is no run row), in the floor's database. */
async function migrateFloorTable(pool: pg.Pool): Promise<void> {
  await pool.query(`CREATE TABLE IF NOT EXISTS floor_records (
    run_id text NOT NULL, seq integer NOT NULL, epoch bigint NOT NULL, body text NOT NULL, bytes integer NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (run_id, seq))`);
}

async function measureDbos(cluster: BenchCluster, dbos: DbosContender, payloads: readonly string[]): Promise<PgSample> {
  const done = await cluster.begin('bench_dbos');
  await dbos.run(payloads);
  return done();
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    log(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
