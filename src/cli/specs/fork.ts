/** `durable-agent fork`: its options and their parse. */
import { checkRunId } from '../../store/run-id.ts';
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { json } from '../options/output.ts';
import { maxTurns, message, nonEmptyMessage } from '../options/start-resume.ts';
import { dir, fleetDatabaseUrl, fleetRun } from '../options/target.ts';

/** fork: a new run from a record of a run in a directory (--to) or of a fleet run (--run, --to-run). */
export interface ForkArgs {
  command: 'fork';
  dir: string;
  at: number | null;
  /** The new run's directory (file runs). */
  to: string | null;
  message: string | null;
  maxTurns: number | null;
  /** --run ID without --to: fork a fleet run; null: a run in dir. */
  fleetRun: string | null;
  /** --run ID with --to NEWDIR: the run of that id in DIR's folder of runs; null: DIR's own run. */
  fileRun: string | null;
  databaseUrl: string | null;
  /** With --run: the new fleet run's id (null: a new one). */
  toRun: string | null;
  json: boolean;
}

export const forkSpec = command({
  name: 'fork',
  words: [],
  synopsis: 'fork [--dir DIR] [--at SEQ] (--to NEWDIR | --run ID [--to-run NEWID]) [--message TEXT]',
  summary: 'a new run from a step of this one (its last resting point by default); the run itself is never changed',
  description:
    'Makes a new run whose journal starts with the records 0 to SEQ of the run in DIR (history lists them) under a run\n' +
    'id of its own, naming its parent. Nothing runs: resume the new run to go on (an open turn is settled as any\n' +
    'resume settles it). What the parent did after SEQ is listed: it happened and is not undone. With --message\n' +
    '(only at a record where the model ended its turn) the new run continues that conversation with the message.\n' +
    'With --run, a fleet run is forked into a new fleet run (--to-run, or a new id) that a worker takes up.',
  options: [
    dir('the directory of the run to fork (the one given to demo or run)'),
    option({ key: 'at', type: 'integer', value: 'SEQ', help: 'the record to fork at (history lists them)', min: 0, max: 1_000_000_000, defaultText: 'the last resting point', api: 'ForkOptions.at' }),
    option({ key: 'to', type: 'string', value: 'NEWDIR', help: 'the directory of the new run; it must hold no run (its tools work on its files)', api: 'ForkOptions.to' }),
    { ...message, help: 'the new run continues the conversation with this user message (only at a record whose state is done)', api: 'ForkOptions.message' },
    { ...maxTurns, help: "with --message: the new run's MAX_TURNS (a total), when the run has no turn left", defaultText: "the run's", api: 'ForkOptions.maxTurns' },
    fleetRun('the run to fork: with --to, the run of that id in DIR; without, a fleet run (the new run goes in the same PostgreSQL database, --database-url)'),
    fleetDatabaseUrl,
    option({ key: 'toRun', type: 'string', value: 'ID', help: 'with --run: the id of the new fleet run', defaultText: 'a new id' }),
    json,
  ],
  examples: [
    'durable-agent fork --dir demo-run --to demo-try-2',
    'durable-agent fork --dir demo-run --at 6 --to demo-at-6 && durable-agent demo --resume --dir demo-at-6',
    'durable-agent fork --dir demo-run --to demo-more --message "Now add a summary line"',
    'durable-agent fork --database-url postgresql://user@db-host:5432/agents --run ID --at 6',
  ],
  parse: (values, { cwd }): ForkArgs => {
    const { databaseUrl, to, toRun } = values;
    const run = values.run === undefined ? undefined : checkRunId(values.run);
    // With --to NEWDIR the run forked is a file run (DIR's own, or the one of --run ID there); without, a fleet run.
    const fleet = run !== undefined && to === undefined;
    if (fleet) {
      if (values.dir !== undefined) {
        throw new UsageError('fork --run ID without --to forks a fleet run into a new fleet run (--to-run ID, or a new id): it takes no --dir. A run by id in DIR is forked with --to NEWDIR.');
      }
    } else {
      if (databaseUrl !== undefined) throw new UsageError('fork --database-url needs --run ID: the fleet run to fork (durable-agent status --database-url lists them).');
      if (toRun !== undefined) throw new UsageError('--to-run names the new fleet run of fork --run ID; a run in a directory is forked with --to NEWDIR.');
      if (to === undefined) throw new UsageError('fork needs --to NEWDIR: the directory of the new run (it must hold no run). Nothing was written.');
    }
    const text = values.message === undefined ? null : nonEmptyMessage(values.message);
    if (values.maxTurns !== undefined && text === null) {
      throw new UsageError('fork --max-turns goes with --message (the new run keeps the MAX_TURNS of its parent otherwise; a resume takes --max-turns).');
    }
    return {
      command: 'fork',
      dir: values.dir ?? cwd,
      at: values.at ?? null,
      to: to ?? null,
      message: text,
      maxTurns: values.maxTurns ?? null,
      fleetRun: fleet ? run : null,
      fileRun: fleet ? null : (run ?? null),
      databaseUrl: databaseUrl ?? null,
      toRun: toRun ?? null,
      json: values.json,
    };
  },
});
