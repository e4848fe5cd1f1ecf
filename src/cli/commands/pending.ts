/**
 * `durable-agent pending`: the calls that wait for a person in DIR's run and the runs under it
 * (a folder of runs by id: in every run of it), with the commands that decide the first and the
 * run's last decisions. Read without a lock; apart from the commands that decide, which it
 * never loads.
 */
import { InboxFileError } from '../../store/inbox/inbox-errors.ts';
import { readRunStatus } from '../../runtime/run-status.ts';
import { treePendingDecisions } from '../../runtime/tree-decisions.ts';
import { decidedText, decisionCommandsFor, decisionHintLines } from '../../words/decision-lines.ts';
import { pendingTable } from '../../words/pending-table.ts';
import type { PendingArgs } from '../args.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { fileStoreOf } from '../run-store.ts';
import { runDirOf } from '../run-dir.ts';

export async function pendingCommand(args: PendingArgs, env: NodeJS.ProcessEnv, writers: Writers, now = Date.now()): Promise<number> {
  const dir = runDirOf(args.dir);
  // Without --run, a folder of runs by id is listed whole: the waiting calls of each of its runs.
  if (args.fileRun === null) {
    const { folderPendingCommand, folderRunsToList } = await import('./folder-pending.ts');
    const runs = await folderRunsToList(dir);
    if (runs) return folderPendingCommand(dir, runs, { json: args.json, env, now }, writers);
  }
  const store = fileStoreOf(dir, args.fileRun);
  // The run's own calls, then those its sub-agent runs wait on (a decision given here reaches them).
  const waiting = await treePendingDecisions(store);
  if (args.json) {
    writers.out(JSON.stringify(waiting.map(({ store: _store, ...call }) => call), null, 2));
    return EXIT.done;
  }
  // What the run recorded last: a decision given here may have been overtaken (a deadline).
  const decided = (await readRunStatus(store)).decided.slice(-LAST_DECISIONS);
  const decidedLines = decided.length ? [`Decided last (${decided.length === 1 ? 'the run’s last decision' : `the run’s last ${decided.length}`}):`, ...decided.map((call) => `  ${decidedText(call)}`)] : [];
  if (waiting.length === 0) {
    writers.out(`Nothing waits for a decision in ${dir}.`);
    for (const line of decidedLines) writers.out(line);
    return EXIT.done;
  }
  for (const line of pendingTable(waiting, now)) writers.out(line);
  for (const { tool_use_id, unreadable } of waiting) {
    if (unreadable) writers.err(`durable-agent: ${tool_use_id}: ${new InboxFileError(unreadable.file, unreadable.problem).message}`);
  }
  const next = waiting.find((call) => !call.given && !call.unreadable);
  if (next) {
    const header = (await store.load()).header;
    // Only when a call waits: the commands that decide it, and the one that resumes the run.
    const { resumeCommandOf } = await import('../resume-command.ts');
    for (const line of decisionHintLines(decisionCommandsFor(env, dir, resumeCommandOf(env, dir, header, args.fileRun), args.fileRun), next)) writers.out(line);
  }
  for (const line of decidedLines) writers.out(line);
  return EXIT.done;
}

const LAST_DECISIONS = 3;
