/** `durable-agent fork`: a new run from a record of a run (in a directory, or in a fleet), and what the parent did after it. */
import path from 'node:path';
import type { ParentCallAfterFork } from '../../fork/fork-plan.ts';
import { type ForkResult, forkRun } from '../../fork/fork-run.ts';
import type { RunOrigin } from '../../store/journal/journal-record.ts';
import { isStoppedAtLimit } from '../../../machines/agent-loop.types.ts';
import type { ForkArgs } from '../args.ts';
import { runDirOf } from '../run-dir.ts';
import { EXIT } from '../exit-codes.ts';
import { tableLines } from '../../words/format.ts';
import type { Writers } from '../plain-reporter.ts';
import { cliCommand, databaseWords, dirWords } from '../../words/shell-command.ts';
import { agentResumeCommand } from '../resume-command.ts';
import { commandLineKeys } from '../command-line-keys.ts';
import { fileStoreOf, folderStoreAt, stateFolderOf } from '../run-store.ts';

export async function forkCommand(args: ForkArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  if (args.fleetRun !== null) return forkFleet(args, env, writers);
  const dir = runDirOf(args.dir);
  const to = path.resolve(args.to!);
  const parent = fileStoreOf(dir, args.fileRun);
  const result = await forkRun({
    from: parent,
    to: folderStoreAt(stateFolderOf(to), { writeFaults: env.DURABLE_AGENT_FAIL_WRITE }),
    ...(args.at !== null ? { at: args.at } : {}),
    ...(args.message !== null ? { message: args.message } : {}),
    ...(args.maxTurns !== null ? { maxTurns: args.maxTurns } : {}),
  });
  if (args.json) {
    writers.out(JSON.stringify(result, null, 2));
    return EXIT.done;
  }
  const { header } = await folderStoreAt(stateFolderOf(to)).load();
  writers.out(`forked run ${result.forkedFrom.runId} (${dir}) at record ${result.forkedFrom.seq} of 0-${result.parentLastSeq} into ${to}`);
  writers.out(`new run ${result.runId}: ${result.records} records, state ${result.state}; the run in ${dir} was not changed`);
  printForkDetails(writers, result);
  if (result.lineageNoteProblem) writers.err(`[fork] the fork could not be noted beside the parent (${result.lineageNoteProblem}); the new run names its parent all the same`);
  // An agent's tools work where its module has them work (the current directory, unless it says otherwise).
  if (!header.agent) writers.out(`its tools work on the files of ${to}: the files of ${dir} were not copied`);
  writers.out(`resume the new run: ${agentResumeCommand(env, to, null, header) ?? resumeCommandOf(env, header.startedBy, to)}`);
  return EXIT.done;
}

/** What both kinds of fork print: the calls the new run settles, and what the parent did after the fork point. */
export function printForkDetails(writers: Writers, result: Pick<ForkResult, 'openCalls' | 'afterFork' | 'forkedFrom'>): void {
  if (result.openCalls.length) {
    const calls = result.openCalls.map((call) => `${call.id} ${call.name}`).join(', ');
    writers.out(`open at the fork point: ${calls} (its resume settles them as any resume does: reused from the ledger, run again, verified, or reported unknown)`);
  }
  const seq = result.forkedFrom.seq;
  if (result.afterFork.length === 0) {
    writers.out(`nothing ran in the parent after record ${seq}`);
    return;
  }
  writers.out(`these happened in the parent after record ${seq} and are not undone (the new run does not know of them):`);
  const rows = result.afterFork.map((call) => [call.tool_use_id, call.name, effectWords(call), outcomeWords(call), call.input]);
  for (const line of tableLines(['call', 'tool', 'effect', 'in the parent', 'input'], rows)) writers.out(`  ${line}`);
}

function effectWords(call: ParentCallAfterFork): string {
  return call.effect === 'side-effect' ? 'SIDE EFFECT' : call.effect === 'read-only' ? 'read-only' : 'not known';
}

function outcomeWords(call: ParentCallAfterFork): string {
  const outcome = call.outcome === null ? 'started, no result recorded (it may have run)' : call.outcome;
  return call.openAtFork ? `${outcome}; open in the new run` : outcome;
}

/** The command that resumes the new run: the one that started the parent (its pinned tools are checked on resume). */
function resumeCommandOf(env: NodeJS.ProcessEnv, startedBy: RunOrigin | undefined, dir: string): string {
  switch (startedBy?.command) {
    case 'demo':
      return cliCommand(env, ['demo', '--resume', ...dirWords(dir)]);
    case 'run':
      return `${cliCommand(env, ['run', '--model', startedBy.model, '--resume', ...dirWords(dir)])} (with the --mcp-config the run was started with, if any)`;
    default:
      return `resumeRun({ store: new FileStore(${JSON.stringify(dir)}), … }) with the tools of the run it was forked from`;
  }
}

async function forkFleet(args: ForkArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const { databaseUrlOf, openDatabase } = await import('../../store/pg/pool.ts');
  const { forkFleetRun } = await import('../../fleet/fork-fleet.ts');
  const pool = await openDatabase(databaseUrlOf(args.databaseUrl, env, 'fork'), 2);
  try {
    const result = await forkFleetRun(pool, {
      run: args.fleetRun!,
      ...(args.toRun !== null ? { toRun: args.toRun } : {}),
      ...(args.at !== null ? { at: args.at } : {}),
      ...(args.message !== null ? { message: args.message } : {}),
      ...(args.maxTurns !== null ? { maxTurns: args.maxTurns } : {}),
      keys: commandLineKeys(env),
    });
    if (args.json) {
      writers.out(JSON.stringify(result, null, 2));
      return EXIT.done;
    }
    writers.out(`forked fleet run ${args.fleetRun} at record ${result.forkedFrom.seq} of 0-${result.parentLastSeq} into fleet run ${result.fleetRun}`);
    writers.out(`new run ${result.fleetRun} (journal run id ${result.runId}): ${result.records} records, state ${result.state}; run ${args.fleetRun} was not changed`);
    printForkDetails(writers, result);
    writers.out(
      result.finished
        ? `it is finished (${result.state}); fork it again with --message to continue it`
        : isStoppedAtLimit(result.state)
          ? `it is stopped at a limit (${result.state}), as its parent was there: ${cliCommand(env, ['raise', '--run', result.fleetRun])} with a larger limit lets a worker take it up`
          : `a worker takes it up (${cliCommand(env, ['worker', ...databaseWords(args.databaseUrl)])})`,
    );
    return EXIT.done;
  } finally {
    await pool.end();
  }
}
