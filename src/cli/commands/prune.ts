/** `durable-agent prune`: removes finished runs, archived ones in DIR or a fleet's in PostgreSQL, and says what went. */
import { pruneRuns } from '../../prune/prune-archive.ts';
import type { PruneCandidate } from '../../prune/prune-plan.ts';
import type { PruneArgs } from '../args.ts';
import { runDirOf } from '../run-dir.ts';
import { EXIT } from '../exit-codes.ts';
import { formatBytes, tableLines } from '../../words/format.ts';
import { readsFleet } from '../reads-fleet.ts';
import type { Writers } from '../plain-reporter.ts';
import { fileStoreOf, folderStoreAt, stateFolderOf } from '../run-store.ts';
import { shredRun } from '../../store/open-store.ts';

export async function pruneCommand(args: PruneArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  if (args.shred !== null) return readsFleet(args, env) ? shredFleetCommand(args, args.shred, env, writers) : shredCommand(args.dir, args.shred, writers);
  if (readsFleet(args, env)) return pruneFleet(args, env, writers);
  const dir = runDirOf(args.dir);
  const report = await pruneRuns(folderStoreAt(stateFolderOf(dir)), { olderThanMs: args.olderThanMs, keep: args.keep, dryRun: args.dryRun });
  printRemoved(writers, report.removed, report.dryRun, (run) => run.journal);
  for (const name of report.leftoversRemoved) writers.out(`${report.dryRun ? 'would delete' : 'deleted'} ${name}, left by an interrupted prune`);
  for (const kept of report.kept) writers.err(`[prune] kept ${kept.journal}: ${kept.why}`);
  printTotal(writers, report.removed.length, report.totalBytes, report.dryRun, 'archived');
  const blobs = report.blobs;
  if (blobs.removed.length) writers.out(`${report.dryRun ? 'would delete' : 'deleted'} ${blobs.removed.length} ${blobs.removed.length === 1 ? 'blob' : 'blobs'} (tool results' images and documents) no run refers to, ${formatBytes(blobs.bytes)}`);
  if (blobs.kept) writers.err(`[prune] kept the blobs no run refers to: ${blobs.kept}`);
  for (const failed of report.failed) {
    writers.err(`durable-agent: could not remove ${failed.journal}: ${failed.message}.${failed.leftover.length ? ` Left: ${failed.leftover.join(', ')}; prune again once that is fixed.` : ''}`);
  }
  return report.failed.length > 0 ? EXIT.storeWriteFailed : EXIT.done;
}

/** `prune --shred --run ID`: the run of that id, by id in DIR's folder of runs or DIR's own run, has its key deleted. */
async function shredCommand(given: string, runId: string, writers: Writers): Promise<number> {
  const dir = runDirOf(given);
  const byId = fileStoreOf(dir, runId);
  const own = fileStoreOf(dir, null);
  const store = (await byId.exists()) || !(await own.exists()) || (await own.load()).header.runId !== runId ? byId : own;
  const { keyId } = await shredRun(store);
  writers.out(`shredded run ${runId}: its run key ${keyId} was deleted, so its content can never be opened again; its state, turn and usage still read, and the other runs are as they were`);
  return EXIT.done;
}

/** `prune --shred --run ID` on the fleet: the run's wrapped key in da_runs is deleted. */
async function shredFleetCommand(args: PruneArgs, runId: string, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const { databaseUrlOf, openDatabase } = await import('../../store/pg/pool.ts');
  const { shredPgRun } = await import('../../store/pg/index.ts');
  const pool = await openDatabase(databaseUrlOf(args.databaseUrl, env, 'prune --shred'), 1);
  try {
    const { keyId } = await shredPgRun(pool, runId);
    writers.out(`shredded fleet run ${runId}: its run key ${keyId} was deleted, so its content can never be opened again; its state, turn and usage still read, and the other runs are as they were`);
    return EXIT.done;
  } finally {
    await pool.end();
  }
}

async function pruneFleet(args: PruneArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const { databaseUrlOf, openDatabase } = await import('../../store/pg/pool.ts');
  const { pruneFleetRuns } = await import('../../fleet/prune-fleet.ts');
  const pool = await openDatabase(databaseUrlOf(args.databaseUrl, env, 'prune'), 2);
  try {
    if (args.batch !== null) {
      const { pruneFleetInBatches } = await import('../../fleet/prune-fleet.ts');
      let batches = 0;
      const removed = await pruneFleetInBatches(pool, { olderThanMs: args.olderThanMs, keep: args.keep }, { batch: args.batch, onBatch: (ids) => writers.out(`[prune] batch ${++batches}: removed ${ids.length} finished ${ids.length === 1 ? 'run' : 'runs'}`) });
      writers.out(`removed ${removed} finished ${removed === 1 ? 'run' : 'runs'} in ${batches} ${batches === 1 ? 'batch' : 'batches'}`);
      return EXIT.done;
    }
    const report = await pruneFleetRuns(pool, { olderThanMs: args.olderThanMs, keep: args.keep, dryRun: args.dryRun });
    printRemoved(writers, report.removed, report.dryRun, (run) => `${run.records} records, ${run.decisions} decisions`);
    for (const id of report.skipped) writers.err(`[prune] kept ${id}: it was taken up while the prune ran`);
    printTotal(writers, report.removed.length, report.totalBytes, report.dryRun, 'finished');
    return EXIT.done;
  } finally {
    await pool.end();
  }
}

function printRemoved<T extends PruneCandidate>(writers: Writers, runs: readonly T[], dryRun: boolean, what: (run: T) => string): void {
  if (runs.length === 0) return;
  const rows = runs.map((run) => [dryRun ? 'would remove' : 'removed', run.id, run.state, new Date(run.finishedAt).toISOString(), formatBytes(run.bytes), what(run)]);
  for (const line of tableLines(['', 'run', 'state', 'finished', 'bytes', 'what'], rows)) writers.out(line);
}

function printTotal(writers: Writers, count: number, bytes: number, dryRun: boolean, kind: string): void {
  const runs = `${count} ${kind} ${count === 1 ? 'run' : 'runs'}, ${formatBytes(bytes)}`;
  writers.out(dryRun ? `would remove ${runs} (dry run: nothing was removed)` : `removed ${runs}`);
}
