/** The table `pending` prints: one row a waiting call (with its run, where the calls are of several runs). Pure. */
import type { PendingDecision } from '../awaits/pending-decisions.ts';
import { waitsForWords } from '../awaits/wait-words.ts';
import { formatAgo, tableLines } from './format.ts';
import { contentCell } from './sealed-words.ts';

/** `run`: the run the call waits in, where the table lists the calls of several (a run's sub-agent runs, a folder, a fleet). */
export function pendingTable(waiting: Array<PendingDecision & { run?: string | undefined }>, now: number): string[] {
  const inRuns = waiting.some((call) => call.run !== undefined);
  const rows = waiting.map((call) => [
    ...(inRuns ? [call.run ?? '(this run)'] : []),
    call.tool_use_id,
    call.name,
    waitsForWords(call),
    call.since === null ? '-' : `${new Date(call.since).toISOString()} (${formatAgo(call.since, now)})`,
    call.unreadable
      ? 'its decision file cannot be read (below)'
      : call.given
        ? `${call.given.verdict} by ${call.given.by}, not taken up yet`
        : call.awaited
          ? 'the run waits on it'
          : 'comes after the one above',
    inputText(call),
  ]);
  return tableLines([...(inRuns ? ['run'] : []), 'call', 'tool', 'waits for', 'since', 'state', 'input'], rows);
}

function inputText(call: PendingDecision): string {
  // A sealed run read without its key: the input is a sealed string, named as such.
  if (typeof call.input === 'string' && contentCell(call.input) !== call.input) return contentCell(call.input);
  const text = JSON.stringify(call.input) ?? '';
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
