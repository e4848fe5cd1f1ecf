/** `durable-agent status` and `history`: their options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { json } from '../options/output.ts';
import { databaseUrl, fileRun, readDir, readFileRun } from '../options/target.ts';

export interface StatusArgs {
  command: 'status';
  dir: string;
  /** Whether --dir was given: it then names the run to read even where a fleet database is configured. */
  dirGiven: boolean;
  json: boolean;
  /** Set: list the runs of a fleet in PostgreSQL instead of the run in DIR. */
  databaseUrl: string | null;
  /** --run ID: the run of that id in DIR's folder of runs; null: DIR's own run. */
  runId: string | null;
}

/** `history`: the records, or with --transcript the conversation they hold. */
export interface HistoryArgs extends Omit<StatusArgs, 'command'> {
  command: 'history';
  transcript: boolean;
  /** With --transcript: every line of every text, not one line an entry cut to the terminal's width. */
  full: boolean;
}

export const statusSpec = command({
  name: 'status',
  words: [],
  summary: "where a run stands: state, turn, pending calls, last save (or a fleet's runs)",
  description:
    'Prints where the run in DIR stands. With --database-url, or with DURABLE_AGENT_DATABASE_URL set and no --dir,\n' +
    "it lists the fleet's runs in PostgreSQL instead; --dir always means the run in that directory.",
  options: [readDir, fileRun, databaseUrl, json],
  examples: ['durable-agent status --dir demo-run', 'durable-agent status --dir my-app --run order-42', 'durable-agent status --database-url postgresql://user@db-host:5432/agents --json'],
  parse: (values, { cwd }): StatusArgs => {
    if (values.dir !== undefined && values.databaseUrl !== undefined) {
      throw new UsageError('status reads either the run in --dir or the fleet at --database-url, not both: give one of them.');
    }
    if (values.run !== undefined && values.databaseUrl !== undefined) {
      throw new UsageError('status --run ID reads a run of DIR\'s folder of runs; status --database-url lists the runs of the fleet, each with its id: give one of them.');
    }
    const runId = readFileRun(values.run);
    return { command: 'status', dir: values.dir ?? cwd, dirGiven: values.dir !== undefined || runId !== null, json: values.json, databaseUrl: values.databaseUrl ?? null, runId };
  },
});

export const historySpec = command({
  name: 'history',
  words: [],
  summary: "every persisted transition of a run: time, state, event, bytes (or, --transcript, its conversation)",
  description:
    'Prints one line per record of the journal in DIR/.durable-agent/: the run as it was saved, step by step.\n' +
    "With --transcript it prints the run's conversation instead: the model's text, its thinking on one line, each tool\n" +
    'call with its input and its result, one line each cut to the width of the terminal (--full: all of it).',
  options: [
    readDir,
    fileRun,
    option({ key: 'transcript', type: 'boolean', help: "print the conversation: the model's text, thinking, tool calls with their inputs and results" }),
    option({ key: 'full', type: 'boolean', help: 'with --transcript: every line of every text and input, not one line an entry cut to the terminal' }),
    json,
  ],
  examples: ['durable-agent history --dir demo-run', 'durable-agent history --dir my-app --run order-42', 'durable-agent history --dir demo-run --transcript'],
  parse: (values, { cwd }): HistoryArgs => {
    if (values.full && !values.transcript) throw new UsageError('--full goes with --transcript (history --transcript --full prints the whole conversation).');
    return {
      command: 'history',
      dir: values.dir ?? cwd,
      dirGiven: values.dir !== undefined,
      json: values.json,
      databaseUrl: null,
      runId: readFileRun(values.run),
      transcript: values.transcript,
      full: values.full,
    };
  },
});
