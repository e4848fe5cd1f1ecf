/**
 * `durable-agent keys rotate`: every sealed run of a folder has its run key wrapped again under the first master key;
 * with --seal-plain, its plain runs are sealed in too.
 */
import { rotateRunKeys, SEAL_IN_POINTS, type SealInPoint, sealPlainRuns } from '../../store/open-store.ts';
import { KeyListError } from '../../seal/seal-errors.ts';
import { KEYS_ENV, type MasterKeys, sealingKeyIdOf } from '../../seal/keys.ts';
import { readsFleet } from '../reads-fleet.ts';
import type { KeysArgs } from '../args.ts';
import { KEY_FILE_ENV, commandLineKeys } from '../command-line-keys.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { lockLeaseOf } from '../lock-lease-env.ts';
import { runDirOf } from '../run-dir.ts';
import { UsageError } from '../usage-error.ts';
import { stateFolderOf } from '../run-store.ts';
import type { Database } from '../../store/pg/pool.ts';

export async function keysCommand(args: KeysArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const given = commandLineKeys(env);
  const keys = typeof given === 'function' ? await given() : given;
  if (keys === null) throw new KeyListError(`${KEYS_ENV} or ${KEY_FILE_ENV}`, 'neither is set, and a rotation needs the new key first and the old ones after it');
  const drill = drillOf(env.CRASH_AFTER);
  if (readsFleet(args, env)) {
    return rotateFleet(args, keys, env, drill.rewrap, writers);
  }
  const folder = stateFolderOf(runDirOf(args.dir));
  const report = await rotateRunKeys(folder, keys, drill.rewrap);
  for (const file of report.rewrapped) writers.out(`rewrapped ${file}`);
  for (const { file, error } of report.failed) writers.err(`durable-agent: could not rewrap ${file}: ${error.message}`);
  const sealingId = sealingKeyIdOf(keys);
  const sealing = sealingId === null ? '' : ` under ${sealingId}`;
  writers.out(
    `${report.rewrapped.length} run ${report.rewrapped.length === 1 ? 'key' : 'keys'} rewrapped${sealing}, ${report.unchanged.length} already were, ` +
      `${report.failed.length} could not be${report.failed.length ? ' (run again once the keys they need are given)' : ''} in ${folder}`,
  );
  const sealedIn = args.sealPlain ? await sealPlain(folder, keys, lockLeaseOf(env), drill.sealIn, writers) : true;
  return report.failed.length > 0 || !sealedIn ? EXIT.refused : EXIT.done;
}

/** --seal-plain: the folder's plain runs sealed in; whether every run is sealed now. */
async function sealPlain(folder: string, keys: MasterKeys, lockLeaseMs: number | undefined, kill: ((point: SealInPoint) => void) | undefined, writers: Writers): Promise<boolean> {
  const report = await sealPlainRuns(folder, keys, { onPoint: kill, lockLeaseMs });
  for (const journal of report.sealed) writers.out(`sealed ${journal}`);
  for (const journal of report.finished) writers.out(`finished sealing ${journal}`);
  for (const { journal, sealed, error } of report.held) writers.out(`${sealed ? 'left to finish' : 'left plain'} ${journal}: ${error.message}`);
  for (const { journal, error } of report.failed) writers.err(`durable-agent: could not seal ${journal}: ${error.message}`);
  const sealingId = sealingKeyIdOf(keys);
  const left = report.held.length + report.failed.length;
  writers.out(
    `${report.sealed.length} plain ${report.sealed.length === 1 ? 'run' : 'runs'} sealed${sealingId === null ? '' : ` under ${sealingId}`}, ` +
      `${report.finished.length} finished, ${report.held.length} in use left for later, ${report.failed.length} could not be` +
      `${left ? ' (run again once the runs in use stop, or the keys they need are given)' : ''} in ${folder}`,
  );
  return left === 0;
}

/** The fleet's run keys, in da_runs, a batch to a transaction. */
async function rotateFleet(args: KeysArgs, keys: MasterKeys, env: NodeJS.ProcessEnv, kill: ((file: string, changed: boolean) => void) | undefined, writers: Writers): Promise<number> {
  const { databaseUrlOf, describeDatabase, openDatabase } = await import('../../store/pg/pool.ts');
  const { rotatePgRunKeys, rotatePgScheduleKeys } = await import('../../store/pg/index.ts');
  const url = databaseUrlOf(args.databaseUrl, env, 'keys rotate');
  const pool = await openDatabase(url, 2);
  try {
    const report = await rotatePgRunKeys(pool, keys, {
      onBatch: (rewrapped) => {
        for (let i = 0; i < rewrapped; i++) kill?.('', true);
      },
    });
    for (const runId of report.rewrapped) writers.out(`rewrapped the key of fleet run ${runId}`);
    for (const { runId, error } of report.failed) writers.err(`durable-agent: could not rewrap the key of fleet run ${runId}: ${error.message}`);
    const sealingId = sealingKeyIdOf(keys);
    const sealing = sealingId === null ? '' : ` under ${sealingId}`;
    writers.out(
      `${report.rewrapped.length} run ${report.rewrapped.length === 1 ? 'key' : 'keys'} rewrapped${sealing}, ${report.unchanged} already were, ` +
        `${report.failed.length} could not be${report.failed.length ? ' (run again once the keys they need are given)' : ''} in ${describeDatabase(url)}`,
    );
    // A sealed schedule's key is wrapped like a run's: left under the old master key, its ticks would stop once that key is dropped.
    const schedules = await rotatePgScheduleKeys(pool, keys);
    for (const name of schedules.rewrapped) writers.out(`rewrapped the key of schedule ${name}`);
    for (const { schedule, error } of schedules.failed) writers.err(`durable-agent: could not rewrap the key of schedule ${schedule}: ${error.message}`);
    const scheduleCount = schedules.rewrapped.length + schedules.unchanged + schedules.failed.length;
    if (scheduleCount > 0) {
      writers.out(
        `${schedules.rewrapped.length} schedule ${schedules.rewrapped.length === 1 ? 'key' : 'keys'} rewrapped${sealing}, ${schedules.unchanged} already were, ` +
          `${schedules.failed.length} could not be${schedules.failed.length ? ' (run again once the keys they need are given)' : ''}`,
      );
    }
    const sealedIn = args.sealPlain ? await sealPlainFleet(pool, keys, describeDatabase(url), writers) : true;
    return report.failed.length > 0 || schedules.failed.length > 0 || !sealedIn ? EXIT.refused : EXIT.done;
  } finally {
    await pool.end();
  }
}

/** --seal-plain on a fleet: its plain runs sealed in, then its plain schedules; whether every run is sealed now. */
async function sealPlainFleet(pool: Database, keys: MasterKeys, where: string, writers: Writers): Promise<boolean> {
  const { sealPlainPgRuns } = await import('../../store/pg/index.ts');
  const report = await sealPlainPgRuns(pool, keys);
  for (const runId of report.sealed) writers.out(`sealed fleet run ${runId}`);
  for (const { runId, error } of report.held) writers.out(`left plain fleet run ${runId}: ${error.message}`);
  for (const { runId, error } of report.failed) writers.err(`durable-agent: could not seal fleet run ${runId}: ${error.message}`);
  for (const name of report.schedules) writers.out(`sealed the task of schedule ${name}`);
  for (const { schedule, error } of report.schedulesFailed) writers.err(`durable-agent: could not seal the task of schedule ${schedule}: ${error.message}`);
  const sealingId = sealingKeyIdOf(keys);
  const left = report.held.length + report.failed.length + report.schedulesFailed.length;
  writers.out(
    `${report.sealed.length} plain ${report.sealed.length === 1 ? 'run' : 'runs'} sealed${sealingId === null ? '' : ` under ${sealingId}`}, ` +
      `${report.schedules.length} plain ${report.schedules.length === 1 ? 'schedule' : 'schedules'}, ` +
      `${report.held.length} in use left for later, ${report.failed.length + report.schedulesFailed.length} could not be` +
      `${left ? ' (run again once the runs in use stop, or the keys they need are given)' : ''} in ${where}`,
  );
  return left === 0;
}

/**
 * Drills: CRASH_AFTER=after-rewrap:N kills this process with SIGKILL once the Nth run key of the
 * rotation is rewrapped and durable (on the fleet: once the batch that holds it committed), and
 * CRASH_AFTER=seal-plain:POINT[:N] once the Nth plain run being sealed in (default the first)
 * passed POINT (run-key, blobs, journal-temp, journal-swapped, inboxes), to check that a rotation
 * killed mid-way loses nothing.
 */
function drillOf(spec: string | undefined): { rewrap?: (file: string, changed: boolean) => void; sealIn?: (point: SealInPoint) => void } {
  if (spec === undefined || spec === '') return {};
  const sealIn = /^seal-plain:([a-z-]+)(?::([1-9]\d*))?$/.exec(spec);
  if (sealIn && SEAL_IN_POINTS.includes(sealIn[1] as SealInPoint)) {
    const point = sealIn[1] as SealInPoint;
    const count = Number(sealIn[2] ?? 1);
    let passed = 0;
    return {
      sealIn: (at) => {
        if (at === point && ++passed === count) process.kill(process.pid, 'SIGKILL');
      },
    };
  }
  const count = Number(/^after-rewrap:([1-9]\d*)$/.exec(spec)?.[1]);
  if (!Number.isSafeInteger(count)) {
    throw new UsageError(
      `CRASH_AFTER=${spec} names no point of a rotation: use after-rewrap:N (killed once the Nth run key is rewrapped) or seal-plain:POINT[:N] ` +
        `(killed once the Nth plain run being sealed passed POINT: ${SEAL_IN_POINTS.join(', ')}).`,
    );
  }
  let rewrapped = 0;
  return {
    rewrap: (_file, changed) => {
      if (changed && ++rewrapped === count) process.kill(process.pid, 'SIGKILL');
    },
  };
}
