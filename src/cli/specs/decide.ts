/** `durable-agent pending`, `approve`, `deny` and `answer`: their options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option, type ValuesOf } from '../options/option.ts';
import { json } from '../options/output.ts';
import { shorten } from '../options/read-options.ts';
import { type FleetTarget, fleetTargetOptions, readFleetTarget } from '../options/target.ts';

const callId = { name: 'CALL_ID', help: 'the tool_use_id of the waiting call (toolu_…), as `durable-agent pending` lists it' } as const;
export const by = option({ key: 'by', type: 'string', value: 'NAME', help: 'who decides, as the journal records it', defaultText: 'your user name', api: 'DecideInput.by' });
const note = option({ key: 'note', type: 'string', value: 'TEXT', help: 'a note kept with the decision in the journal', api: 'DecideInput.note' });
const reason = option({ key: 'reason', type: 'string', value: 'TEXT', help: 'why, for the model (required)', api: 'DecideInput.reason' });
const input = option({ key: 'input', type: 'string', value: 'JSON', help: "the call's input, edited: a JSON object valid for the tool's input schema", api: 'DecideInput.input' });

export interface PendingArgs extends FleetTarget {
  command: 'pending';
  json: boolean;
}

/** approve, deny, answer: one decision for one waiting call. */
export interface DecideArgs extends FleetTarget {
  command: 'approve' | 'deny' | 'answer';
  callId: string;
  /** approve --input: the edited input, parsed. Undefined when not given. */
  input?: unknown;
  note: string | null;
  /** deny --reason. */
  reason: string | null;
  /** answer's TEXT. */
  text: string | null;
  /** --by, else the CLI's user name (filled in by the command). */
  by: string | null;
}

export const pendingSpec = command({
  name: 'pending',
  words: [],
  summary: 'the calls that wait for a person (approval, an answer) in a run, a folder of runs or a fleet, since when',
  description:
    'Lists the calls of the run in DIR that wait for a decision: approve or deny them, answer a question. Without --run,\n' +
    'in a folder of runs by id, it lists those of every run of the folder, each with its run; with --database-url (or\n' +
    'DURABLE_AGENT_DATABASE_URL set and no --dir), those of every run of the fleet. It reads the journal without a lock,\n' +
    'so it works while the run waits in another process and after it stopped (exit 7).',
  options: [...fleetTargetOptions, json],
  examples: [
    'durable-agent pending --dir demo-run',
    'durable-agent pending --run invoice-acme',
    'durable-agent pending --database-url postgresql://user@db-host:5432/agents',
    'durable-agent pending --database-url postgresql://user@db-host:5432/agents --run RUN_ID',
  ],
  parse: (values, { cwd }): PendingArgs => ({ command: 'pending', ...readFleetTarget('pending', values, cwd, { wholeFleet: true }), json: values.json }),
});

export const approveSpec = command({
  name: 'approve',
  words: [],
  arguments: [callId],
  synopsis: 'approve [--dir DIR] CALL_ID [--input JSON] [--note TEXT] [--by NAME]',
  summary: 'let a waiting call run, as it is or with edited input',
  description:
    'Approves a call that waits for a decision. A waiting run picks it up within a second; a stopped one when it is\n' +
    "resumed (--resume). --input replaces the call's input (it must fit the tool's schema; the model is told a person\n" +
    'changed it). A call is decided once: a second decision is refused (exit 2), nothing written.',
  options: [...fleetTargetOptions, input, note, by],
  examples: [
    'durable-agent approve --dir demo-run toolu_03',
    'durable-agent approve --database-url postgresql://user@db-host:5432/agents --run RUN_ID toolu_03',
    'durable-agent approve --dir demo-run toolu_03 --input \'{"text":"Shorter report."}\'',
  ],
  parse: (values, context): DecideArgs => {
    const args = decision('approve', values, context.positionals, context.cwd, { note: values.note ?? null });
    if (values.input !== undefined) args.input = inputOf(values.input);
    return args;
  },
});

export const denySpec = command({
  name: 'deny',
  words: [],
  arguments: [callId],
  synopsis: 'deny [--dir DIR] CALL_ID --reason TEXT [--by NAME]',
  summary: 'refuse a waiting call: the model is told "denied by a person: REASON"',
  description:
    'Denies a call that waits for approval. It never runs: its result, recorded once, is the error "denied by a person:\n' +
    'REASON", and the model goes on from there.',
  options: [...fleetTargetOptions, reason, by],
  examples: ['durable-agent deny --dir demo-run toolu_03 --reason "not before Monday"'],
  parse: (values, context): DecideArgs => {
    const args = decision('deny', values, context.positionals, context.cwd, { reason: values.reason ?? null });
    if (args.reason === null) throw new UsageError('deny needs --reason TEXT: the model is told why its call was denied.');
    return args;
  },
});

export const answerSpec = command({
  name: 'answer',
  words: [],
  arguments: [callId, { name: 'TEXT', help: "the answer, given to the model as the question's result" }],
  synopsis: 'answer [--dir DIR] CALL_ID TEXT [--by NAME]',
  summary: "answer the model's question (run --allow-questions)",
  description: "Answers a question the model asked with ask_user (run --allow-questions): TEXT becomes the call's result.",
  options: [...fleetTargetOptions, by],
  examples: ['durable-agent answer --dir my-project toolu_04 "Use the 2024 figures."'],
  parse: (values, context): DecideArgs => {
    const args = decision('answer', values, context.positionals, context.cwd, { text: context.positionals[1] ?? '' });
    if (args.text!.trim() === '') throw new UsageError('answer needs a TEXT that is not empty: it is what the model gets as the answer.');
    return args;
  },
});

function decision(
  command: DecideArgs['command'],
  values: ValuesOf<typeof fleetTargetOptions> & { readonly by: string | undefined },
  positionals: readonly string[],
  cwd: string,
  more: Partial<Pick<DecideArgs, 'note' | 'reason' | 'text'>>,
): DecideArgs {
  const [callId = ''] = positionals;
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(callId)) {
    throw new UsageError(`"${shorten(callId)}" is not a call id: a call id is a tool_use_id such as toolu_01A9… (letters, digits, _ and -), as durable-agent pending lists it.`);
  }
  return { command, ...readFleetTarget(command, values, cwd), callId, note: null, reason: null, text: null, by: values.by ?? null, ...more };
}

function inputOf(text: string): unknown {
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--input is not JSON (${(error as Error).message}): give the whole input as a JSON object, e.g. --input '{"text":"…"}'.`);
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new UsageError(`--input must be a JSON object (a tool's input), not ${Array.isArray(input) ? 'an array' : JSON.stringify(input)}.`);
  }
  return input;
}
