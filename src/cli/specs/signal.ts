/** `durable-agent signal`: its options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { shorten } from '../options/read-options.ts';
import { type FleetTarget, fleetTargetOptions, readFleetTarget } from '../options/target.ts';

const data = option({ key: 'data', type: 'string', value: 'JSON', help: "what the signal carries, a JSON value: the wait's result gives it to the model", api: 'SignalInput.data' });
const id = option({
  key: 'id',
  type: 'string',
  value: 'ID',
  help: 'for idempotent delivery: a signal of this NAME and ID is taken once, however often it is sent (without it, one a wait)',
  api: 'SignalInput.id',
});
const sender = option({ key: 'by', type: 'string', value: 'NAME', help: 'who sends it, as the journal records it', defaultText: 'your user name', api: 'SignalInput.by' });

export interface SignalArgs extends FleetTarget {
  command: 'signal';
  name: string;
  /** --data, parsed; null when not given. */
  data: unknown;
  id: string | null;
  /** --by, else the CLI's user name (filled in by the command). */
  by: string | null;
}

const WORD = /^[A-Za-z0-9_-]{1,128}$/;

export const signalSpec = command({
  name: 'signal',
  words: [],
  arguments: [{ name: 'NAME', help: 'the event, as the wait call names it: { "event": "NAME" }' }],
  synopsis: 'signal [--dir DIR] [--run ID] NAME [--data JSON] [--id ID] [--by NAME]',
  summary: 'send an event to a run: the wait call for it goes on',
  description:
    'Delivers the event NAME to the run, exactly once into its journal: the wait that waits for it (the wait tool,\n' +
    '{ "event": NAME }) takes it within a second, a stopped run when it is resumed, a fleet run when a worker takes it\n' +
    'up. An event no call waits for yet is kept until one does. Sent twice before a wait took it, it is taken once;\n' +
    'with --id, a signal of that NAME and ID is taken once ever (a retry delivers nothing).',
  options: [...fleetTargetOptions, data, id, sender],
  examples: [
    'durable-agent signal --dir my-project deploy-done --data \'{"version":"1.4.2"}\'',
    'durable-agent signal --database-url postgresql://db-host/agents --run RUN_ID paid --id inv-2041',
  ],
  parse: (values, context): SignalArgs => {
    const [name = ''] = context.positionals;
    if (!WORD.test(name)) throw new UsageError(`"${shorten(name)}" is not an event name: letters, digits, _ and - (at most 128), as the wait call names it.`);
    if (values.id !== undefined && !WORD.test(values.id)) throw new UsageError(`--id "${shorten(values.id)}" is not a signal id: letters, digits, _ and - (at most 128).`);
    return { command: 'signal', ...readFleetTarget('signal', values, context.cwd), name, data: dataOf(values.data), id: values.id ?? null, by: values.by ?? null };
  },
});

function dataOf(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--data is not JSON (${(error as Error).message}): give a JSON value, e.g. --data '{"version":"1.4.2"}' or --data '"text"'.`);
  }
}
