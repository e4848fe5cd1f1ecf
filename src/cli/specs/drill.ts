/** `durable-agent drill`: its options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { json } from '../options/output.ts';
import { readDir } from '../options/target.ts';
import { agentOfModule, agentsModule } from '../options/agents.ts';

export interface DrillArgs {
  command: 'drill';
  /** The module of agent definitions (as worker --agents takes it). */
  agents: string;
  /** Which of its agents, when it has several. */
  agent: string | undefined;
  /** A JSON array of replies; or the replies of a stored run (fromRun, in dir). */
  repliesFile: string | undefined;
  fromRun: string | undefined;
  dir: string;
  out: string | undefined;
  json: boolean;
  /** How many crash points to play again with a real SIGKILL, each in a process of its own. */
  sigkillPoints: number;
}

export const drillSpec = command({
  name: 'drill',
  words: [],
  synopsis: 'drill --agents FILE (--replies-file FILE | --from-run ID [--dir DIR]) [options]',
  summary: 'crash-test your own agent: kill it at every crash point of a path, resume, and say what became of each tool call',
  description:
    'Plays your agent (a module of defineAgent definitions, as worker --agents takes it) on scripted replies: a JSON\n' +
    'array in the Messages API\'s shape ({ "stop_reason", "content" }), or the replies a stored run received. Then, for\n' +
    'every crash point of that path, plays it again in a fresh scratch folder (the working directory of the tools),\n' +
    'kills it there and resumes it, and reports per tool: once (the ledger, verify), ran again (read-only), unknown\n' +
    'state told to the model (a side effect without verify), or RAN TWICE, with the advice for each. The tools run\n' +
    'for real; the module may export setup({ dir }), teardown({ dir }) and count({ tool, idempotencyKey, dir }) (the\n' +
    'effects the world shows; default: run() calls per idempotency key). Exit 0: every side effect once or told\n' +
    'unknown; 1: one ran twice; 2: bad input, nothing run.',
  options: [
    agentsModule,
    agentOfModule,
    option({ key: 'repliesFile', type: 'string', value: 'FILE', help: 'the replies to play, a JSON array of { stop_reason, content }', readsFile: true, api: 'DrillOptions.replies' }),
    option({ key: 'fromRun', type: 'string', value: 'ID', help: 'play the replies a stored run received instead (a run of --dir by its id)' }),
    readDir,
    option({
      key: 'sigkillPoints',
      type: 'integer',
      value: 'N',
      help: 'of the points where a side effect is open, play N again in a process of its own killed by a real SIGKILL',
      min: 0,
      max: 1000,
      default: 3,
    }),
    option({ key: 'out', type: 'string', value: 'FILE', help: 'write the report as Markdown to FILE, and as JSON beside it (FILE with .json)' }),
    { ...json, help: 'print the report as JSON' },
  ],
  examples: ['durable-agent drill --agents ./agents.mjs --replies-file replies.json --out drill.md', 'durable-agent drill --agents ./agents.mjs --from-run invoice-7 --dir my-project'],
  parse: (values, { cwd }): DrillArgs => {
    if (values.agents === undefined) throw new UsageError('drill needs --agents FILE: the module whose agent it drills.');
    if ((values.repliesFile === undefined) === (values.fromRun === undefined)) {
      throw new UsageError('drill needs the replies to play: --replies-file REPLIES.json, or --from-run ID (a stored run of --dir), one of them.');
    }
    return { command: 'drill', agents: values.agents, agent: values.agent, repliesFile: values.repliesFile, fromRun: values.fromRun, dir: values.dir ?? cwd, out: values.out, json: values.json, sigkillPoints: values.sigkillPoints };
  },
});
