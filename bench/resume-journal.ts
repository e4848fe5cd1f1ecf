/**
 * Writes the journal a resume is measured on: a T-turn run killed right after the ledger entry
 * of turn T (crash point after-effect-write:T), so the resume has an open turn to settle from
 * the ledger before it can go on.
 *
 * Written by the real runtime and the real FileStore with fsync and fdatasync made no-ops
 * (withoutSyncs): the bytes are exactly those a real run writes, without waiting ~30,000 times
 * for the disk. Only the writing of this input is sped up; nothing timed runs this way.
 */
import path from 'node:path';
import { startRun } from '../src/runtime/run-api.ts';
import { SimulatedCrash } from '../src/runtime/crash-points.ts';
import { FileStore, JOURNAL_FILE } from '../src/store/file-store.ts';
import { withoutSyncs } from './io-counter.ts';
import { benchRunOptions, benchScript } from './workload.ts';

export function resumeStoreDir(dir: string): string {
  return path.join(dir, '.durable-agent');
}

/** Returns the journal's path. */
export async function writeKilledRun(dir: string, turns: number): Promise<string> {
  const store = new FileStore(resumeStoreDir(dir));
  const options = { ...benchRunOptions(store, benchScript(turns)), crashAfter: `after-effect-write:${turns}` };
  try {
    await withoutSyncs(() => startRun(options));
    throw new Error(`the ${turns}-turn run was not stopped at its last ledger entry`);
  } catch (error) {
    if (!(error instanceof SimulatedCrash)) throw error;
  } finally {
    store.close();
  }
  // The last ledger entry was written without an fsync (B would have synced it): the commit mark
  // does not count it yet, and a resume's load would rewrite the mark. Done once here, so that
  // every measured resume reads the same bytes and changes none.
  const settle = new FileStore(resumeStoreDir(dir));
  await settle.load({ repair: true });
  settle.close();
  return path.join(store.dir, JOURNAL_FILE);
}
