/**
 * `durable-agent pending` without --run in a folder of runs by id: the calls that wait for a
 * person in every run of the folder, each under the id of the run it waits in (a sub-agent run's
 * under its own), with the commands that decide the first. Read without a lock, as `pending` reads.
 */
import { type PendingDecision, pendingDecisions } from '../../awaits/pending-decisions.ts';
import { waitingCallsOf } from '../../awaits/waiting-calls.ts';
import { foldJournal } from '../../store/journal/fold-journal.ts';
import type { JournalHeader } from '../../store/journal/journal-record.ts';
import type { LoadedRun, StoredRunEntry } from '../../store/store.ts';
import { decisionCommandsFor, decisionHintLines } from '../../words/decision-lines.ts';
import { pendingTable } from '../../words/pending-table.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { fileStoreOf, runsFolderOfDir } from '../run-store.ts';

/** A waiting call of a run of the folder: `run` is its id there, null for the folder's own run. */
export interface FolderPendingDecision extends PendingDecision {
  run: string | null;
}

/** How the table names the folder's own run, which takes no --run. */
const OWN_RUN = "(the folder's own)";

interface ReadRun {
  entry: StoredRunEntry;
  loaded: LoadedRun | null;
  problem: string | null;
}

/**
 * The current runs of DIR's folder, read; null when none of its runs by id was started by a
 * person (none, or only sub-agent runs): then `pending` is about DIR's own run, as ever.
 */
export async function folderRunsToList(dir: string): Promise<ReadRun[] | null> {
  const current = runsFolderOfDir(dir).entries().filter((entry) => !entry.archived);
  // A folder with no run by id is read by the command as it always was: nothing is read here.
  if (!current.some((entry) => entry.folderId !== null)) return null;
  const runs: ReadRun[] = [];
  for (const entry of current) {
    try {
      runs.push({ entry, loaded: await entry.read(), problem: null });
    } catch (error) {
      runs.push({ entry, loaded: null, problem: (error as Error).message });
    }
  }
  const startedByPerson = runs.some(({ entry, loaded }) => entry.folderId !== null && (loaded === null || !loaded.header.calledBy));
  return startedByPerson ? runs.sort((a, b) => idOrder(a.entry.folderId, b.entry.folderId)) : null;
}

export async function folderPendingCommand(dir: string, runs: readonly ReadRun[], options: { json: boolean; env: NodeJS.ProcessEnv; now: number }, writers: Writers): Promise<number> {
  const waiting: FolderPendingDecision[] = [];
  const headers = new Map<string | null, JournalHeader>();
  for (const { entry, loaded, problem } of runs) {
    if (!loaded) {
      if (!options.json) writers.err(`durable-agent: the run ${entry.folderId ?? OWN_RUN} cannot be read (${problem}); its waiting calls are not listed (durable-agent list shows it).`);
      continue;
    }
    headers.set(entry.folderId, loaded.header);
    // Only a run with a call that waits is read again, whole, with its inbox.
    if (waitingCallsOf(loaded.header.runId, foldJournal(entry.location, loaded).context).length === 0) continue;
    for (const call of await pendingDecisions(fileStoreOf(dir, entry.folderId))) waiting.push({ ...call, run: entry.folderId });
  }
  if (options.json) {
    writers.out(JSON.stringify(waiting, null, 2));
    return EXIT.done;
  }
  if (waiting.length === 0) {
    writers.out(`Nothing waits for a decision in the ${runs.length} ${runs.length === 1 ? 'run' : 'runs'} of ${dir}.`);
    return EXIT.done;
  }
  for (const line of pendingTable(waiting.map((call) => ({ ...call, run: call.run ?? OWN_RUN })), options.now)) writers.out(line);
  const next = waiting.find((call) => !call.given && !call.unreadable);
  if (next) {
    // Only when a call waits: the commands that decide it, and the one that resumes its run.
    const { resumeCommandOf } = await import('../resume-command.ts');
    const commands = decisionCommandsFor(options.env, dir, resumeCommandOf(options.env, dir, headers.get(next.run)!, next.run), next.run);
    for (const line of decisionHintLines(commands, next)) writers.out(line);
  }
  return EXIT.done;
}

/** The folder's own run first, then the runs by id in the order of their ids (a sub-agent run after the run that called it). */
function idOrder(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}
