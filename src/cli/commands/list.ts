/** `durable-agent list`: the runs of a folder, by id, with where each stands. */
import { listRuns } from '../../fleet/list-runs.ts';
import type { ListArgs } from '../args.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { runsFolderOfDir } from '../run-store.ts';
import { formatAgo, tableLines } from '../../words/format.ts';
import { treeOrder } from '../../words/tree-lines.ts';
import { withTenants } from '../../words/tenant-column.ts';
import { contentCell, contentWords } from '../../words/sealed-words.ts';

const TASK_WIDTH = 40;

export async function listCommand(args: ListArgs, writers: Writers, now = Date.now()): Promise<number> {
  const folder = runsFolderOfDir(args.dir);
  const runs = await listRuns(folder, { states: args.states ?? undefined, limit: args.limit ?? undefined, after: args.after ?? undefined, tenant: args.tenant ?? undefined });
  if (args.json) {
    // A task read sealed (no keys) says what it needs, as the fleet's and the API's do, never its sealed text.
    writers.out(JSON.stringify(runs.map((run) => (contentWords(run.task) === run.task ? run : { ...run, task: contentWords(run.task) })), null, 2));
    return EXIT.done;
  }
  // A sub-agent's run under the run that called it, indented; newest first otherwise.
  const current = runs.filter((run) => !run.archived);
  const ordered = runs.some((run) => run.calledBy !== null)
    ? [...treeOrder(current, (run) => run.runId, (run) => run.calledBy?.runId ?? null), ...runs.filter((run) => run.archived).map((row) => ({ row, depth: 0 }))]
    : runs.map((row) => ({ row, depth: 0 }));
  const rows = ordered.map(({ row: run, depth }) => [
    `${depth > 0 ? `${'  '.repeat(depth - 1)}└ ` : ''}${run.runId}`,
    run.state ?? `unreadable: ${run.problem}`,
    cut(contentCell(run.task)),
    String(run.turn),
    run.updatedAt === null ? '-' : formatAgo(run.updatedAt, now),
    run.calledBy ? `${run.calledBy.runId} (${run.calledBy.toolUseId})` : '-',
    run.parent ?? '-',
    run.archived ? 'archived' : '-',
  ]);
  const tenants = withTenants(ordered.map(({ row }) => row), rows);
  for (const line of tableLines(['run', 'state', 'task', 'turn', 'last save', 'called by', 'forked from', 'archived', ...(tenants ? ['tenant'] : [])], rows)) writers.out(line);
  writers.out(`${runs.length} ${runs.length === 1 ? 'run' : 'runs'} in ${folder.root}`);
  return EXIT.done;
}

function cut(task: string): string {
  const flat = task.replace(/\s+/g, ' ');
  return flat.length > TASK_WIDTH ? `${flat.slice(0, TASK_WIDTH - 1)}…` : flat;
}
