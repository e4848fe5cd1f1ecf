/**
 * `durable-agent cancel` and `pause` (a run in --dir, or a fleet run with --run ID) and
 * `unpause --run ID` (a fleet run's pause cleared). They write a request to the run's control
 * inbox and return at once; the process that drives the run honours it at its next step.
 */
import os from 'node:os';
import path from 'node:path';
import { cancelRun, type ControlOutcome, pauseRun, unpauseRun } from '../../runtime/cancel-run.ts';
import { CONTROL_POINTS, type ControlPoint } from '../../store/open-store.ts';
import { requestWords } from '../../control/control-request.ts';
import type { RunStore } from '../../store/store.ts';
import type { ControlArgs, UnpauseArgs } from '../args.ts';
import { UsageError } from '../usage-error.ts';
import { runDirOf } from '../run-dir.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { cliCommand, dirWords } from '../../words/shell-command.ts';
import { fileStoreOf } from '../run-store.ts';
import { fleetStoreOf } from '../fleet-store.ts';
import { userName } from '../user-name.ts';

export async function controlCommand(args: ControlArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const by = args.by ?? `${userName()}@${os.hostname()} (pid ${process.pid})`;
  if (args.fleetRun !== null) {
    const { openDatabase, databaseUrlOf } = await import('../../store/pg/pool.ts');
    const pool = await openDatabase(databaseUrlOf(args.databaseUrl, env, `${args.command} --run`), 2);
    try {
      const store = await fleetStoreOf(pool, args.fleetRun, { writeFaults: env.DURABLE_AGENT_FAIL_WRITE });
      return report(args, await ask(args, store, by), env, writers, `fleet run ${args.fleetRun}`);
    } finally {
      await pool.end();
    }
  }
  const dir = runDirOf(args.dir);
  const store = fileStoreOf(dir, args.fileRun, { writeFaults: env.DURABLE_AGENT_FAIL_WRITE, onControlPoint: crashPointsOf(env.CRASH_AFTER) });
  try {
    return report(args, await ask(args, store, by), env, writers, dir);
  } finally {
    store.close();
  }
}

export async function unpauseCommand(args: UnpauseArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const { openDatabase, databaseUrlOf } = await import('../../store/pg/pool.ts');
  const pool = await openDatabase(databaseUrlOf(args.databaseUrl, env, 'unpause --run'), 2);
  try {
    const store = await fleetStoreOf(pool, args.fleetRun);
    // A queued run has no journal yet: its pause is cleared all the same.
    if (!(await store.queued())) await store.load();
    const pause = await unpauseRun({ store });
    if (!pause) {
      writers.out(`Fleet run ${args.fleetRun} is not paused: nothing to clear (a worker takes it up when it is due).`);
      return EXIT.done;
    }
    writers.out(`[unpause] the pause of fleet run ${args.fleetRun} (${requestWords(pause)}) is cleared: a worker of the fleet claims it and goes on from its last step.`);
    return EXIT.done;
  } finally {
    await pool.end();
  }
}

function ask(args: ControlArgs, store: RunStore, by: string): Promise<ControlOutcome> {
  return args.command === 'cancel' ? cancelRun({ store, by, reason: args.reason }) : pauseRun({ store, by });
}

function report(args: ControlArgs, outcome: ControlOutcome, env: NodeJS.ProcessEnv, writers: Writers, where: string): number {
  const code = reportRun(args, outcome, env, writers, where);
  const verb = args.command === 'cancel' ? 'cancel' : 'pause';
  for (const child of outcome.passedOn ?? []) {
    const how = child.outcome === 'cancelled' ? 'cancelled (no process drove it)' : child.outcome === 'already-requested' ? `had a ${verb} asked already` : `${verb} asked of the process that drives it`;
    writers.out(`  its sub-agent run ${child.runId}: ${how}.`);
  }
  return code;
}

function reportRun(args: ControlArgs, outcome: ControlOutcome, env: NodeJS.ProcessEnv, writers: Writers, where: string): number {
  const { request } = outcome;
  const status = args.fleetRun !== null ? cliCommand(env, ['status', '--database-url', 'URL']) : cliCommand(env, ['status', ...dirWords(path.resolve(args.dir), args.fileRun)]);
  if (args.command === 'cancel') {
    if (outcome.outcome === 'cancelled') {
      writers.out(`[cancelled] the run in ${where} is cancelled ${requestWords(request)} (record ${outcome.seq}, turn ${outcome.turn}).`);
      writers.out('No process was driving it, so it was cancelled here. A resume is refused; fork it to try again from one of its steps.');
      return EXIT.done;
    }
    const already = outcome.outcome === 'already-requested' ? 'A cancel was asked already' : 'Cancel asked';
    if (outcome.queued) {
      writers.out(`[cancel] ${already} ${requestWords(request)}, of the run in ${where}, which no worker has started yet.`);
      writers.out(`The worker that takes it up ends it as cancelled before its first model call (nothing of it runs). ${status} shows when it did.`);
      return EXIT.done;
    }
    writers.out(`[cancel] ${already} ${requestWords(request)}, of the run in ${where} (state ${outcome.state}, turn ${outcome.turn}).`);
    writers.out(
      'The process that drives it stops at its next step boundary: a running tool is told (ctx.signal) and awaited up to its time limit, ' +
        `its outcome recorded; then the run ends as cancelled and the process exits 9. ${status} shows when it did.`,
    );
    return EXIT.done;
  }
  const already = outcome.outcome === 'already-requested' ? 'A pause was asked already' : 'Pause asked';
  if (outcome.queued && args.fleetRun !== null) {
    writers.out(`[pause] ${already} ${requestWords(request)}, of the run in ${where}, which no worker has started yet.`);
    writers.out(`No worker claims it while it is paused; ${cliCommand(env, ['unpause', '--run', args.fleetRun])} lets the fleet start it.`);
    return EXIT.done;
  }
  writers.out(`[pause] ${already} ${requestWords(request)}, of the run in ${where} (state ${outcome.state}, turn ${outcome.turn}).`);
  if (outcome.waitsForChildren) {
    const unpause = args.fleetRun !== null ? cliCommand(env, ['unpause', '--run', args.fleetRun]) : 'A resume of it';
    writers.out(`No process drives it: it waits for its sub-agent runs, and the pause reached those that run. It stays where it is; ${unpause} lets them, then it, go on.`);
    return EXIT.done;
  }
  const resume =
    args.fleetRun !== null
      ? `No worker claims it while it is paused; ${cliCommand(env, ['unpause', '--run', args.fleetRun])} lets the fleet go on with it.`
      : 'Resume it with --resume (demo --resume or run --resume, as it was started): that clears the pause.';
  writers.out(`The process that drives it stops at its next step boundary, saved (it exits 130, as after Ctrl-C). ${resume}`);
  return EXIT.done;
}

/**
 * Drills: CRASH_AFTER=after-control-temp:1 (the request written under its temporary name) or
 * after-control-link:1 (linked to its name, the directory not yet synced) kills this process
 * there with SIGKILL, to check that a kill leaves no request or a whole one.
 */
function crashPointsOf(spec: string | undefined): ((point: ControlPoint) => void) | undefined {
  if (spec === undefined || spec === '') return undefined;
  const point = /^after-(control-temp|control-link):1$/.exec(spec)?.[1] as ControlPoint | undefined;
  if (!point) throw new UsageError(`CRASH_AFTER=${spec} names no point of a cancel or pause request's write: use ${CONTROL_POINTS.map((p) => `after-${p}:1`).join(' or ')}.`);
  return (passed) => {
    if (passed === point) process.kill(process.pid, 'SIGKILL');
  };
}
