/** `durable-agent prune`: its options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { databaseUrl, fileRun, readDir, readFileRun } from '../options/target.ts';

const DAY_MS = 86_400_000;

/** prune: which finished runs go (a rule is required: older-than, keep, or both). */
export interface PruneArgs {
  command: 'prune';
  dir: string;
  dirGiven: boolean;
  databaseUrl: string | null;
  olderThanMs: number | null;
  keep: number | null;
  dryRun: boolean;
  /** --batch N: a fleet's finished runs the rule selects removed N to a transaction, without listing them; null: one by one, listed. */
  batch: number | null;
  /** --shred --run ID: the sealed run whose run key is deleted (its content unreadable for good); null: no shred. */
  shred: string | null;
}

export const pruneSpec = command({
  name: 'prune',
  words: [],
  synopsis: 'prune [--dir DIR | --database-url URL] (--older-than DURATION | --keep N) [--dry-run]',
  summary: 'remove finished runs: archived ones in DIR, or finished runs of a fleet',
  description:
    'Removes the finished (done, failed, stopped at max turns) runs in DIR/.durable-agent/archive/, with their decisions;\n' +
    'the current run and unfinished archived runs are never touched. With --database-url (or DURABLE_AGENT_DATABASE_URL\n' +
    'and no --dir) it removes finished runs of the fleet with their records and decisions instead; a queued, leased or\n' +
    'waiting run is never touched. It needs --older-than, --keep or both (with both, a run goes only if both say so).\n' +
    'For a large fleet, --batch N removes the done, failed and cancelled runs the rule selects, N to a transaction,\n' +
    'oldest first, without reading the others: no lock held long, and a prune killed goes on when run again.\n' +
    'With --shred --run ID it crypto-shreds one sealed run of DIR (or of the fleet) instead: its wrapped run key is deleted, so its content\n' +
    '(task, messages, tool inputs and results, decisions) can never be opened again, with any key; what finds and operates\n' +
    'the run (its state, turn, tools, usage) still reads, and every other run is left as it was.',
  options: [
    readDir,
    databaseUrl,
    option({
      key: 'olderThanMs',
      type: 'duration',
      value: 'DURATION',
      help: 'remove runs that finished at least this long ago (30d, 12h, 0s for all)',
      min: 0,
      max: 3650 * DAY_MS,
      api: 'PruneOptions.olderThanMs',
    }),
    option({ key: 'keep', type: 'integer', value: 'N', help: 'keep the N newest finished runs, whatever their age', min: 0, max: 1_000_000, api: 'PruneOptions.keep' }),
    option({ key: 'dryRun', type: 'boolean', help: 'list what would be removed; remove nothing', api: 'PruneOptions.dryRun' }),
    option({ key: 'batch', type: 'integer', value: 'N', help: "a fleet's finished runs removed N to a transaction, oldest first (retention for a large fleet)", min: 1, max: 100_000 }),
    option({ key: 'shred', type: 'boolean', help: "with --run ID: delete that sealed run's key, its content unreadable for good (crypto-shredding)" }),
    { ...fileRun, help: 'with --shred: the sealed run to shred, the id list and status show (DIR\'s own run, or one of its runs by id)' },
  ],
  examples: [
    'durable-agent prune --dir demo-run --older-than 30d --dry-run',
    'durable-agent prune --database-url postgresql://user@db-host:5432/agents --keep 100',
    'durable-agent prune --database-url postgresql://db-host/agents --older-than 90d --batch 500',
    'durable-agent prune --dir my-project --shred --run invoice-7',
    'durable-agent prune --database-url postgresql://db-host/agents --shred --run invoice-7',
  ],
  parse: (values, { cwd }): PruneArgs => {
    if (values.shred || values.run !== undefined) {
      if (!values.shred || values.run === undefined) throw new UsageError('--shred and --run go together: prune --shred --run ID deletes the key of that sealed run. Nothing was removed.');
      if (values.olderThanMs !== undefined || values.keep !== undefined || values.dryRun || values.batch !== undefined) {
        throw new UsageError('prune --shred --run ID shreds one run: give it without --older-than, --keep, --batch or --dry-run. Nothing was removed.');
      }
      if (values.dir !== undefined && values.databaseUrl !== undefined) {
        throw new UsageError('prune --shred --run ID shreds a run of --dir or of the fleet at --database-url, not both: give one of them. Nothing was removed.');
      }
      const shred = readFileRun(values.run);
      return { command: 'prune', dir: values.dir ?? cwd, dirGiven: values.dir !== undefined, databaseUrl: values.databaseUrl ?? null, olderThanMs: null, keep: null, dryRun: false, batch: null, shred };
    }
    if (values.dir !== undefined && values.databaseUrl !== undefined) {
      throw new UsageError('prune removes either the archived runs in --dir or the finished runs of the fleet at --database-url, not both: give one of them.');
    }
    if (values.olderThanMs === undefined && values.keep === undefined) {
      throw new UsageError('prune needs a rule: --older-than DURATION (e.g. 30d), --keep N (the N newest finished runs stay), or both. Nothing was removed.');
    }
    if (values.batch !== undefined && (values.dryRun || values.dir !== undefined)) {
      throw new UsageError('--batch removes the finished runs of a fleet a batch at a time, without listing them first: give it without --dry-run and --dir (prune --dry-run lists what would go). Nothing was removed.');
    }
    return {
      command: 'prune',
      dir: values.dir ?? cwd,
      dirGiven: values.dir !== undefined,
      databaseUrl: values.databaseUrl ?? null,
      olderThanMs: values.olderThanMs ?? null,
      keep: values.keep ?? null,
      dryRun: values.dryRun,
      batch: values.batch ?? null,
      shred: null,
    };
  },
});
