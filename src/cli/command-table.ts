/**
 * Every command and every option of the command line, once. The parser (args.ts) accepts exactly
 * these options and checks numbers against these ranges; the help (help.ts) is printed from the
 * same rows, so the two cannot drift apart.
 */

export type OptionType = 'boolean' | 'string' | 'integer' | 'duration' | 'decimal' | 'ratio';

export interface OptionSpec {
  /** The long name, without the dashes. */
  readonly name: string;
  readonly type: OptionType;
  /** What the value is called in the help (DIR, N, MS); string and integer options only. */
  readonly value?: string;
  readonly help: string;
  /** Integer, decimal and ratio options: the allowed range, inclusive (duration options: in milliseconds). */
  readonly min?: number;
  readonly max?: number;
  /** Integer options: the value when the option is absent (the parser fills it in). */
  readonly default?: number;
  /** Shown as the default where the parser leaves the field unset and a later layer decides. */
  readonly defaultText?: string;
}

/** A value given by its place after the command's words: `approve CALL_ID`. */
export interface ArgumentSpec {
  /** As shown in the usage and help: CALL_ID, TEXT. */
  readonly name: string;
  readonly help: string;
}

export interface CommandSpec {
  readonly name: string;
  /** Words that must follow the command, in order: `db migrate`, `submit demo`. */
  readonly words: readonly string[];
  /** Values that must follow the words, in order (all required). */
  readonly arguments?: readonly ArgumentSpec[];
  /** The synopsis after `durable-agent`, where the options alone do not say what is required. */
  readonly synopsis?: string;
  /** One line for the list of commands. */
  readonly summary: string;
  readonly description: string;
  readonly options: readonly OptionSpec[];
  readonly examples: readonly string[];
}

// Ranges: wide enough for any real use, narrow enough that a typo or an overflow (400 nines
// become Infinity, which JSON stores as null) is refused before it reaches a run's journal.
const MAX_TURNS_LIMIT = 100_000;
/** The API refuses more than a model can produce with its own message; this only stops nonsense. */
const MAX_TOKENS_LIMIT = 1_000_000;
const HOUR_MS = 3_600_000;
const TEN_MINUTES_MS = 600_000;
const DAY_MS = 86_400_000;

const dir = (help: string): OptionSpec => ({ name: 'dir', type: 'string', value: 'DIR', help, defaultText: 'the current directory' });
const runDir = dir('the directory the run works in; its state is kept in DIR/.durable-agent/');
const readDir = dir('the directory of the run to read (the one given to demo or run)');
const resume = { name: 'resume', type: 'boolean', help: 'go on with the run stored in DIR, from its last checkpoint' } as const;
const message = {
  name: 'message',
  type: 'string',
  value: 'TEXT',
  help: "with --resume on a done run: continue the conversation with this user message (the run's MAX_TURNS stays its total)",
} as const;
const fresh = { name: 'fresh', type: 'boolean', help: 'start over: an unfinished run in DIR is moved to .durable-agent/archive/ (never deleted)' } as const;
const takeOver = {
  name: 'take-over',
  type: 'boolean',
  help: "take the run's lock at once from the process that holds it (e.g. one on a host that is gone); the holder is printed",
} as const;
const acceptLostRecord = {
  name: 'accept-lost-record',
  type: 'boolean',
  help: 'with --resume: go on although the journal lost its last committed record (that step may be done again)',
} as const;
const allowToolChange = {
  name: 'allow-tool-change',
  type: 'boolean',
  help: 'with --resume: go on although the run was started with other tools (by another command)',
} as const;
const maxTurns: OptionSpec = {
  name: 'max-turns',
  type: 'integer',
  value: 'N',
  help: 'stop cleanly (exit 5) after N tool-using turns; a resume with a larger N goes on',
  min: 1,
  max: MAX_TURNS_LIMIT,
  defaultText: "20; a resume keeps the run's",
};
const maxTokens: OptionSpec = {
  name: 'max-tokens',
  type: 'integer',
  value: 'N',
  help: "the most tokens one model reply may have; the model's own limit applies too",
  min: 1,
  max: MAX_TOKENS_LIMIT,
  defaultText: '4096',
};
const maxRetries: OptionSpec = {
  name: 'max-retries',
  type: 'integer',
  value: 'N',
  help: 'retries of a failed Anthropic API call (429, 5xx, 529, a timeout…) before the run stops with exit 3',
  min: 0,
  max: 20,
  defaultText: '4',
};
const timeout: OptionSpec = {
  name: 'timeout',
  type: 'integer',
  value: 'MS',
  help: 'time limit of one Anthropic API attempt, in milliseconds',
  min: 1_000,
  max: HOUR_MS,
  defaultText: '600000',
};
const toolConcurrency: OptionSpec = {
  name: 'tool-concurrency',
  type: 'integer',
  value: 'N',
  help: "how many read-only calls of one reply run at once; other calls run alone, in the model's order (1: one call at a time)",
  min: 1,
  max: 64,
  defaultText: '4',
};
const compact: OptionSpec = {
  name: 'compact',
  type: 'string',
  value: 'MODE',
  help:
    "server (the API compacts: compact_20260112), client (the model summarises the older turns) or off; " +
    'pinned with the run (a resume keeps it)',
  defaultText: 'server if the model supports it, else client if its window is known, else off',
};
const contextWindow: OptionSpec = {
  name: 'context-window',
  type: 'integer',
  value: 'N',
  help: "the model's context window in input tokens, overriding what the model says (compaction triggers from it)",
  min: 1_000,
  max: 100_000_000,
  defaultText: "the model's, from the Models API",
};
const compactTrigger: OptionSpec = {
  name: 'compact-trigger',
  type: 'ratio',
  value: 'R',
  help: 'compact once the input reaches this share of the context window',
  min: 0.1,
  max: 0.95,
  defaultText: '0.8',
};
/** Tool result clearing (clear_tool_uses_20250919): demo and run, with a Claude model. */
const clearToolUses: readonly OptionSpec[] = [
  {
    name: 'clear-tool-uses',
    type: 'boolean',
    help: 'have the API clear old tool results from what the model reads (clear_tool_uses_20250919, before compaction); the journal keeps them all; pinned with the run',
  },
  {
    name: 'clear-trigger',
    type: 'integer',
    value: 'N',
    help: 'with --clear-tool-uses: clear once the input reaches N tokens',
    min: 1_000,
    max: 100_000_000,
    defaultText: 'half the context window, else 100000',
  },
  { name: 'clear-keep', type: 'integer', value: 'N', help: 'with --clear-tool-uses: the N most recent tool uses stay whole', min: 0, max: 10_000, defaultText: '3' },
  {
    name: 'clear-at-least',
    type: 'integer',
    value: 'N',
    help: 'with --clear-tool-uses: clear only when at least N tokens go (each clearing costs the prompt cache)',
    min: 1_000,
    max: 100_000_000,
  },
  { name: 'clear-exclude', type: 'string', value: 'TOOLS', help: 'with --clear-tool-uses: tools whose results are never cleared (names separated by commas)' },
  { name: 'clear-inputs', type: 'boolean', help: "with --clear-tool-uses: clear the calls' inputs too, not only their results" },
];
const realModel = (help: string): OptionSpec => ({ name: 'model', type: 'string', value: 'NAME', help });
const pace: OptionSpec = {
  name: 'pace',
  type: 'integer',
  value: 'MS',
  help: 'each scripted model reply and tool call takes MS milliseconds, to watch it or kill it mid-way',
  min: 0,
  max: TEN_MINUTES_MS,
  default: 0,
};
const jitter: OptionSpec = {
  name: 'jitter',
  type: 'integer',
  value: 'MS',
  help: 'and up to MS milliseconds more, at random',
  min: 0,
  max: TEN_MINUTES_MS,
  default: 0,
};
const plain = { name: 'plain', type: 'boolean', help: 'print the plain lines, never the live view' } as const;
const verbose = { name: 'verbose', type: 'boolean', help: 'also print every save, model call and tool call (to stderr), and stack traces' } as const;
const otelContent = {
  name: 'otel-content',
  type: 'boolean',
  help: 'with OTEL_EXPORTER_OTLP_ENDPOINT set: the traces carry messages, tool inputs and results too (API keys are taken out)',
} as const;
const json = { name: 'json', type: 'boolean', help: 'print JSON instead of a table' } as const;
// A person in the loop: which calls wait for a decision, and how a run waits for one.
const requireApproval: OptionSpec = {
  name: 'require-approval',
  type: 'string',
  value: 'TOOLS',
  help:
    'NAME[,NAME…] or side-effects (every tool that is not read-only): each call to these tools waits for ' +
    "a person's decision (approve, deny) before it runs",
};
const wait = {
  name: 'wait',
  type: 'boolean',
  help: 'wait for decisions even when stdout is not a terminal (a service, a pipe); approve, deny or answer give them from another shell',
} as const;
const noWait = {
  name: 'no-wait',
  type: 'boolean',
  help: 'never wait for a decision: stop (exit 7) and print the commands that give it; resume with --resume afterwards',
} as const;
const decisionTimeout: OptionSpec = {
  name: 'decision-timeout',
  type: 'duration',
  value: 'DURATION',
  help: 'deny what is still undecided this long after it began to wait (90s, 15m, 2h, 3d), with the reason "no decision within DURATION"',
  min: 1_000,
  max: 90 * DAY_MS,
};
const replaceDecisionPolicy = {
  name: 'replace-decision-policy',
  type: 'boolean',
  help:
    'with --resume: the --require-approval, --allow-questions and --decision-timeout given now replace the rule the run ' +
    'started with (kept in its journal; without this a resume applies it, adding what is given)',
} as const;
const by: OptionSpec = { name: 'by', type: 'string', value: 'NAME', help: 'who decides, as the journal records it', defaultText: 'your user name' };
// Budgets: checked before each model call; reaching one stops the run (exit 8), resumably.
const maxCostUsd: OptionSpec = {
  name: 'max-cost-usd',
  type: 'decimal',
  value: 'USD',
  help:
    "stop cleanly (exit 8) before a model call once the run has cost USD dollars at list prices (needs the model's price); " +
    "kept with the run: a resume with a larger USD goes on",
  min: 0.0001,
  max: 1_000_000,
};
const maxTotalTokens: OptionSpec = {
  name: 'max-total-tokens',
  type: 'integer',
  value: 'N',
  help: 'stop cleanly (exit 8) before a model call once the run has used N tokens (input, output, cache read and write); kept with the run',
  min: 1,
  max: 1_000_000_000_000,
};
const callId = { name: 'CALL_ID', help: 'the tool_use_id of the waiting call (toolu_…), as `durable-agent pending` lists it' } as const;

const databaseUrl: OptionSpec = {
  name: 'database-url',
  type: 'string',
  value: 'URL',
  help: 'the PostgreSQL database of the fleet, postgresql://user@host:5432/db',
  defaultText: '$DURABLE_AGENT_DATABASE_URL',
};

const fleetRun: OptionSpec = {
  name: 'run',
  type: 'string',
  value: 'ID',
  help: 'a run of the fleet (its id, as submit printed it): the decision goes through PostgreSQL (--database-url)',
};
const fleetDatabaseUrl: OptionSpec = { ...databaseUrl, help: 'with --run: the PostgreSQL database of the fleet, postgresql://user@host:5432/db' };

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'demo',
    words: [],
    summary: "the lesson's task with a scripted model (no key): kill it anywhere, resume it",
    description:
      'Runs the task "Turn sales-notes.txt into a short report and write it to report.txt." in DIR with three tools\n' +
      '(read_notes, count_words, write_report), creating sample notes when DIR has none. It uses a scripted model\n' +
      'unless --model names a real one (then ANTHROPIC_API_KEY must be set). Kill it at any moment\n' +
      '(CRASH_AFTER=after-<point>:<n> does it on purpose, see --list-crash-points) and run it again with --resume.',
    options: [
      runDir,
      resume,
      message,
      fresh,
      takeOver,
      acceptLostRecord,
      allowToolChange,
      realModel('a real Claude model instead of the scripted one (needs ANTHROPIC_API_KEY)'),
      maxTurns,
      maxTokens,
      maxCostUsd,
      maxTotalTokens,
      maxRetries,
      timeout,
      compact,
      contextWindow,
      compactTrigger,
      ...clearToolUses,
      pace,
      jitter,
      { name: 'no-verify', type: 'boolean', help: 'write_report offers no verify(): a resume reports its unknown state to the model instead' },
      { name: 'list-crash-points', type: 'boolean', help: 'print every crash label a whole demo run passes, in order, and exit' },
      requireApproval,
      wait,
      noWait,
      decisionTimeout,
      replaceDecisionPolicy,
      plain,
      verbose,
      otelContent,
    ],
    examples: [
      'CRASH_AFTER=after-effect-write:3 durable-agent demo --dir demo-run     # killed, exit 137',
      'durable-agent demo --dir demo-run --resume                            # picks it up, exit 0',
      'durable-agent demo --dir demo-run --require-approval write_report --no-wait  # exit 7, waits',
    ],
  },
  {
    name: 'run',
    words: [],
    synopsis: 'run --model NAME (--task TEXT | --resume [--message TEXT]) [options]',
    summary: 'a real model on your task, with list_files, read_file and write_file in DIR',
    description:
      'Gives a real Claude model (ANTHROPIC_API_KEY, read from the environment only; ANTHROPIC_BASE_URL points\n' +
      'elsewhere) your task and three tools on the files of DIR. Kill it, or lose the network, and go on with --resume.',
    options: [
      { name: 'task', type: 'string', value: 'TEXT', help: 'what to do (stored with the run: a resume takes it from there)' },
      realModel('the Claude model, e.g. claude-sonnet-4-5 (required)'),
      runDir,
      { name: 'system', type: 'string', value: 'FILE', help: 'a system prompt, read from FILE (stored with the run)' },
      {
        name: 'mcp-config',
        type: 'string',
        value: 'FILE',
        help: "an .mcp.json file: its servers' tools join the file tools as mcp__<server>__<tool> (give it again with --resume)",
      },
      resume,
      message,
      fresh,
      takeOver,
      acceptLostRecord,
      allowToolChange,
      maxTurns,
      maxTokens,
      maxCostUsd,
      maxTotalTokens,
      maxRetries,
      timeout,
      toolConcurrency,
      { name: 'no-stream', type: 'boolean', help: 'ask for each reply whole instead of streaming it (the live view then shows no reply as it arrives)' },
      compact,
      contextWindow,
      compactTrigger,
      ...clearToolUses,
      requireApproval,
      { name: 'allow-questions', type: 'boolean', help: "give the model an ask_user tool: its question waits for a person's answer (durable-agent answer)" },
      wait,
      noWait,
      decisionTimeout,
      replaceDecisionPolicy,
      plain,
      verbose,
      otelContent,
    ],
    examples: [
      'durable-agent run --model claude-sonnet-4-5 --dir my-project --task "Summarise notes.md into summary.md"',
      'durable-agent run --model claude-sonnet-4-5 --task "Tidy up" --require-approval side-effects --no-wait',
      'durable-agent run --model claude-sonnet-4-5 --dir my-project --resume',
      'durable-agent run --model claude-sonnet-4-5 --task "Tidy up" --max-cost-usd 2   # exit 8 once $2 is spent',
    ],
  },
  {
    name: 'status',
    words: [],
    summary: "where a run stands: state, turn, pending calls, last save (or a fleet's runs)",
    description:
      'Prints where the run in DIR stands. With --database-url, or with DURABLE_AGENT_DATABASE_URL set and no --dir,\n' +
      "it lists the fleet's runs in PostgreSQL instead; --dir always means the run in that directory.",
    options: [readDir, databaseUrl, json],
    examples: ['durable-agent status --dir demo-run', 'durable-agent status --database-url postgresql://user@db-host:5432/agents --json'],
  },
  {
    name: 'history',
    words: [],
    summary: 'every persisted transition of a run: time, state, event, bytes',
    description: 'Prints one line per record of the journal in DIR/.durable-agent/: the run as it was saved, step by step.',
    options: [readDir, json],
    examples: ['durable-agent history --dir demo-run'],
  },
  {
    name: 'pending',
    words: [],
    summary: 'the calls of a run that wait for a person: approval or an answer, since when',
    description:
      'Lists the calls of the run in DIR that wait for a decision: approve or deny them, answer a question. It reads the\n' +
      'journal without a lock, so it works while the run waits in another process and after it stopped (exit 7).',
    options: [readDir, fleetRun, fleetDatabaseUrl, json],
    examples: ['durable-agent pending --dir demo-run', 'durable-agent pending --database-url postgresql://user@db-host:5432/agents --run RUN_ID'],
  },
  {
    name: 'approve',
    words: [],
    arguments: [callId],
    synopsis: 'approve [--dir DIR] CALL_ID [--input JSON] [--note TEXT] [--by NAME]',
    summary: 'let a waiting call run, as it is or with edited input',
    description:
      "Approves a call that waits for a decision. A waiting run picks it up within a second; a stopped one when it is\n" +
      'resumed (--resume). --input replaces the call\'s input (it must fit the tool\'s schema; the model is told a person\n' +
      'changed it). A call is decided once: a second decision is refused (exit 2), nothing written.',
    options: [
      readDir,
      fleetRun,
      fleetDatabaseUrl,
      { name: 'input', type: 'string', value: 'JSON', help: "the call's input, edited: a JSON object valid for the tool's input schema" },
      { name: 'note', type: 'string', value: 'TEXT', help: 'a note kept with the decision in the journal' },
      by,
    ],
    examples: ['durable-agent approve --dir demo-run toolu_03', 'durable-agent approve --database-url postgresql://user@db-host:5432/agents --run RUN_ID toolu_03', 'durable-agent approve --dir demo-run toolu_03 --input \'{"text":"Shorter report."}\''],
  },
  {
    name: 'deny',
    words: [],
    arguments: [callId],
    synopsis: 'deny [--dir DIR] CALL_ID --reason TEXT [--by NAME]',
    summary: 'refuse a waiting call: the model is told "denied by a person: REASON"',
    description:
      'Denies a call that waits for approval. It never runs: its result, recorded once, is the error "denied by a person:\n' +
      'REASON", and the model goes on from there.',
    options: [readDir, fleetRun, fleetDatabaseUrl, { name: 'reason', type: 'string', value: 'TEXT', help: 'why, for the model (required)' }, by],
    examples: ['durable-agent deny --dir demo-run toolu_03 --reason "not before Monday"'],
  },
  {
    name: 'answer',
    words: [],
    arguments: [callId, { name: 'TEXT', help: "the answer, given to the model as the question's result" }],
    synopsis: 'answer [--dir DIR] CALL_ID TEXT [--by NAME]',
    summary: "answer the model's question (run --allow-questions)",
    description: "Answers a question the model asked with ask_user (run --allow-questions): TEXT becomes the call's result.",
    options: [readDir, fleetRun, fleetDatabaseUrl, by],
    examples: ['durable-agent answer --dir my-project toolu_04 "Use the 2024 figures."'],
  },
  {
    name: 'prune',
    words: [],
    synopsis: 'prune [--dir DIR | --database-url URL] (--older-than DURATION | --keep N) [--dry-run]',
    summary: 'remove finished runs: archived ones in DIR, or finished runs of a fleet',
    description:
      'Removes the finished (done, failed, stopped at max turns) runs in DIR/.durable-agent/archive/, with their decisions;\n' +
      'the current run and unfinished archived runs are never touched. With --database-url (or DURABLE_AGENT_DATABASE_URL\n' +
      'and no --dir) it removes finished runs of the fleet with their records and decisions instead; a queued, leased or\n' +
      'waiting run is never touched. It needs --older-than, --keep or both (with both, a run goes only if both say so).',
    options: [
      readDir,
      databaseUrl,
      { name: 'older-than', type: 'duration', value: 'DURATION', help: 'remove runs that finished at least this long ago (30d, 12h, 0s for all)', min: 0, max: 3650 * DAY_MS },
      { name: 'keep', type: 'integer', value: 'N', help: 'keep the N newest finished runs, whatever their age', min: 0, max: 1_000_000 },
      { name: 'dry-run', type: 'boolean', help: 'list what would be removed; remove nothing' },
    ],
    examples: ['durable-agent prune --dir demo-run --older-than 30d --dry-run', 'durable-agent prune --database-url postgresql://user@db-host:5432/agents --keep 100'],
  },
  {
    name: 'cancel',
    words: [],
    synopsis: 'cancel [--dir DIR | --run ID] [--reason TEXT] [--by NAME]',
    summary: 'end a run for good: it stops at its next step, in the final state cancelled (exit 9)',
    description:
      'Asks the run to stop at its next step boundary and end in the final state cancelled, with who and why. The\n' +
      'process that drives it is told at once: a running tool gets an aborted ctx.signal and is awaited up to its time\n' +
      'limit, its outcome recorded; then the process exits 9. A run no process drives is cancelled here and now. A\n' +
      'cancelled run is never resumed (fork it to try again from a step); a finished run is refused (exit 2).',
    options: [
      readDir,
      { ...fleetRun, help: 'a run of the fleet (its id, as submit printed it), cancelled through PostgreSQL (--database-url)' },
      fleetDatabaseUrl,
      { name: 'reason', type: 'string', value: 'TEXT', help: 'why, kept with the cancelled state' },
      { ...by, help: 'who cancels, as the journal records it' },
    ],
    examples: ['durable-agent cancel --dir demo-run --reason "wrong task"', 'durable-agent cancel --database-url postgresql://user@db-host:5432/agents --run RUN_ID'],
  },
  {
    name: 'pause',
    words: [],
    synopsis: 'pause [--dir DIR | --run ID] [--by NAME]',
    summary: 'stop a running run at its next step, saved and resumable (its process exits 130)',
    description:
      'Asks the process that drives the run to stop at its next step boundary, like Ctrl-C: everything is saved and\n' +
      '--resume goes on (and clears the pause); status says who paused it. A fleet run (--run) is not claimed by any\n' +
      'worker while paused: `durable-agent resume --run ID` lets the fleet take it up again. A run that is not running\n' +
      'has nothing to pause (exit 2).',
    options: [readDir, { ...fleetRun, help: 'a run of the fleet, paused through PostgreSQL (--database-url)' }, fleetDatabaseUrl, { ...by, help: 'who pauses, as status shows it' }],
    examples: ['durable-agent pause --dir demo-run', 'durable-agent pause --database-url postgresql://user@db-host:5432/agents --run RUN_ID'],
  },
  {
    name: 'resume',
    words: [],
    synopsis: 'resume --run ID [--database-url URL]',
    summary: 'let the workers of a fleet take a paused run up again',
    description:
      'Clears the pause of a fleet run: a worker claims it and goes on from its last step. A run in a directory is\n' +
      'resumed by the command that drives it (demo --resume, run --resume), which clears its pause itself.',
    options: [{ ...fleetRun, help: 'the paused run of the fleet (required)' }, fleetDatabaseUrl],
    examples: ['durable-agent resume --database-url postgresql://user@db-host:5432/agents --run RUN_ID'],
  },
  {
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
      { name: 'at', type: 'integer', value: 'SEQ', help: 'the record to fork at (history lists them)', min: 0, max: 1_000_000_000, defaultText: 'the last resting point' },
      { name: 'to', type: 'string', value: 'NEWDIR', help: 'the directory of the new run; it must hold no run (its tools work on its files)' },
      { ...message, help: 'the new run continues the conversation with this user message (only at a record whose state is done)' },
      { ...maxTurns, help: "with --message: the new run's MAX_TURNS (a total), when the run has no turn left", defaultText: "the run's" },
      { ...fleetRun, help: 'a fleet run to fork (its id): the new run goes in the same PostgreSQL database (--database-url)' },
      fleetDatabaseUrl,
      { name: 'to-run', type: 'string', value: 'ID', help: 'with --run: the id of the new fleet run', defaultText: 'a new id' },
      json,
    ],
    examples: [
      'durable-agent fork --dir demo-run --to demo-try-2',
      'durable-agent fork --dir demo-run --at 6 --to demo-at-6 && durable-agent demo --resume --dir demo-at-6',
      'durable-agent fork --dir demo-run --to demo-more --message "Now add a summary line"',
      'durable-agent fork --database-url postgresql://user@db-host:5432/agents --run ID --at 6',
    ],
  },
  {
    name: 'viz',
    words: [],
    summary: "the loop as a diagram with a run's history on it, one HTML page",
    description:
      "Writes one self-contained HTML page: the machine as a diagram and the run's journal as a timeline you can\n" +
      'step through. Without a run in DIR it draws the machine alone. --stately prints the machine for Stately Studio.',
    options: [
      readDir,
      { name: 'out', type: 'string', value: 'FILE', help: 'write the page to FILE', defaultText: 'DIR/.durable-agent/viz.html' },
      {
        name: 'open',
        type: 'boolean',
        help: "hand the page to the desktop's opener (xdg-open, open, start); if none can run, say so and where the page is",
      },
      { name: 'stately', type: 'boolean', help: 'print the machine as Stately Studio source to stdout instead (no page)' },
    ],
    examples: ['durable-agent viz --dir demo-run --open', 'durable-agent viz --stately > agent-loop.stately.js'],
  },
  {
    name: 'db',
    words: ['migrate'],
    summary: "create or migrate the fleet's PostgreSQL schema",
    description: 'Brings the schema of the fleet database to this version (also done on first use by submit and worker).',
    options: [databaseUrl],
    examples: ['durable-agent db migrate --database-url postgresql://user@db-host:5432/agents'],
  },
  {
    name: 'submit',
    words: ['demo'],
    summary: 'queue demo runs for the workers of a fleet',
    description: 'Queues COUNT demo runs in the fleet database and prints their ids; workers pick them up.',
    options: [
      databaseUrl,
      { name: 'count', type: 'integer', value: 'N', help: 'how many runs to queue', min: 1, max: 10_000, default: 1 },
      realModel('a real Claude model instead of the scripted one (the workers need ANTHROPIC_API_KEY)'),
      { ...maxTurns, help: 'each run stops cleanly after N tool-using turns', defaultText: '20' },
      pace,
      jitter,
      { ...requireApproval, help: requireApproval.help + '; pinned in each run: a waiting run holds no lease and is taken up once decided (approve --run ID)' },
      decisionTimeout,
      { ...maxCostUsd, help: "each run's worker stops it (final state stoppedAtBudget) before a model call once it has cost USD dollars at list prices (needs --model with a price)" },
      { ...maxTotalTokens, help: "each run's worker stops it (final state stoppedAtBudget) before a model call once it has used N tokens" },
      compact,
      contextWindow,
      compactTrigger,
      ...clearToolUses,
    ],
    examples: [
      'durable-agent submit demo --count 30 --pace 100',
      'durable-agent submit demo --require-approval write_report',
      'durable-agent submit demo --count 10 --max-total-tokens 20000 --compact client --context-window 8000',
    ],
  },
  {
    name: 'worker',
    words: [],
    summary: "run the fleet's queued runs; take over the runs of workers that died",
    description:
      'Claims queued runs (and runs whose lease expired) and drives them, K at a time, until stopped with\n' +
      'SIGTERM or Ctrl-C (each run is saved and its lease released).',
    options: [
      databaseUrl,
      { name: 'concurrency', type: 'integer', value: 'K', help: 'how many runs this worker drives at once', min: 1, max: 256, default: 1 },
      { name: 'exit-when-idle', type: 'boolean', help: 'stop when the queue is empty' },
      {
        name: 'lease-ms',
        type: 'integer',
        value: 'MS',
        help: "how long a run's lease lasts unless renewed; a worker renews it every third of that",
        min: 1_000,
        max: TEN_MINUTES_MS,
        defaultText: '15000',
      },
      { name: 'poll-ms', type: 'integer', value: 'MS', help: 'how often an idle worker looks at the queue (it also wakes at once when runs are queued or freed)', min: 10, max: 60_000, defaultText: '500' },
      maxRetries,
      timeout,
      otelContent,
    ],
    examples: ['durable-agent worker --concurrency 4 --exit-when-idle'],
  },
];

export function commandSpec(name: string): CommandSpec | undefined {
  return COMMANDS.find((command) => command.name === name);
}
