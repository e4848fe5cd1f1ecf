/** `durable-agent status` and `durable-agent history`: read a run's store and print it. */
import path from 'node:path';
import { type HistoryStep, readRunHistory, readRunStatus } from '../../runtime/run-status.ts';
import { FileStore } from '../../store/file-store.ts';
import type { StatusArgs } from '../args.ts';
import { EXIT } from '../exit-codes.ts';
import { formatAgo, formatBytes, formatUsage, keyValueLines, tableLines } from '../format.ts';
import type { Writers } from '../plain-reporter.ts';
import { STATE_DIR } from '../state-dir.ts';

export async function statusCommand(args: StatusArgs, writers: Writers, now = Date.now()): Promise<number> {
  const store = new FileStore(path.join(path.resolve(args.dir), STATE_DIR));
  const status = await readRunStatus(store);
  if (args.json) {
    writers.out(JSON.stringify(status, null, 2));
    return EXIT.done;
  }
  const pending = status.pending.length
    ? status.pending.map((call) => `${call.id} ${call.name} (${call.recorded ? 'recorded in the ledger' : 'no result yet'})`).join(', ')
    : 'none';
  const rows: Array<[string, string]> = [
    ['run', status.runId],
    ['store', status.location],
    ['task', status.task],
    ['state', status.state],
    ['turn', `${status.turn} of ${status.maxTurns}`],
    ['pending', pending],
    ['ledger', `${status.ledgerEntries} ${status.ledgerEntries === 1 ? 'entry' : 'entries'}`],
    ['tokens', formatUsage(status.usage)],
    [
      'last save',
      `${status.lastSave.point} (record ${status.lastSave.seq}) at ${new Date(status.lastSave.at).toISOString()}, ${formatAgo(status.lastSave.at, now)}, ${formatBytes(status.lastSave.bytes)}`,
    ],
    ['journal', `${status.records} records, ${formatBytes(status.journalBytes)}`],
  ];
  if (status.finalText !== null) rows.push(['answer', status.finalText]);
  if (status.failure) rows.push(['failure', status.failure.message]);
  if (status.tornTail) rows.push(['torn tail', `${status.tornTail.bytes} bytes after the last complete record (a resume drops them)`]);
  for (const line of keyValueLines(rows)) writers.out(line);
  return EXIT.done;
}

export async function historyCommand(args: StatusArgs, writers: Writers): Promise<number> {
  const store = new FileStore(path.join(path.resolve(args.dir), STATE_DIR));
  const steps = await readRunHistory(store);
  if (args.json) {
    writers.out(JSON.stringify(steps, null, 2));
    return EXIT.done;
  }
  const rows = steps.map((step) => [
    String(step.seq),
    new Date(step.at).toISOString(),
    String(step.turn),
    step.state,
    step.event,
    step.point,
    step.pending.join(',') || '-',
    formatBytes(step.bytes),
    historyNote(step),
  ]);
  for (const line of tableLines(['#', 'time', 'turn', 'state', 'event', 'saved', 'pending', 'bytes', 'note'], rows)) writers.out(line);
  return EXIT.done;
}

function historyNote(step: HistoryStep): string {
  const parts: string[] = [];
  const note = step.note;
  if (note?.resumed) parts.push(`resumed by pid ${note.resumed.pid} after record ${note.resumed.fromSeq}`);
  for (const reuse of note?.reused ?? []) parts.push(`${reuse.decision} ${reuse.tool_use_id}`);
  if (note?.reconcile) parts.push(`${note.reconcile.decision} ${note.reconcile.tool_use_id}`);
  if (note?.reopened) parts.push(`reopened, MAX_TURNS=${note.reopened.maxTurns}`);
  return parts.join('; ');
}
