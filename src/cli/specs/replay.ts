/** `durable-agent replay`: its options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { json } from '../options/output.ts';
import { readDir } from '../options/target.ts';
import { agentOfModule, agentsModule } from '../options/agents.ts';

export interface ReplayArgs {
  command: 'replay';
  agents: string;
  agent: string | undefined;
  fromRun: string;
  dir: string;
  runTools: boolean;
  json: boolean;
}

export const replaySpec = command({
  name: 'replay',
  words: [],
  synopsis: 'replay --agents FILE --from-run ID [--dir DIR] [--run-tools] [options]',
  summary: "replay a stored run against your agent's current code: what a new version would do otherwise",
  description:
    "Puts the model calls a stored run recorded to today's definition of its agent (a module of defineAgent\n" +
    'definitions, as worker --agents takes it) and reports each divergence: a tool that is gone, a recorded input\n' +
    "today's schema refuses, a call today's approval rule would hold for a person; with --run-tools it also runs each\n" +
    'recorded call with the tools of today (in a scratch folder, their working directory) and reports a result that is\n' +
    'not the recorded one. The stored run is only read. Exit 0: no divergence; 1: some; 2: bad input.',
  options: [
    agentsModule,
    agentOfModule,
    option({ key: 'fromRun', type: 'string', value: 'ID', help: 'the stored run to replay (a run of --dir by its id)' }),
    readDir,
    option({ key: 'runTools', type: 'boolean', help: "run the recorded calls with today's tools and compare their results", api: 'ReplayOptions.runTools' }),
    { ...json, help: 'print the report as JSON' },
  ],
  examples: ['durable-agent replay --agents ./agents.mjs --from-run invoice-7 --dir my-project', 'durable-agent replay --agents ./agents.mjs --from-run invoice-7 --run-tools --json'],
  parse: (values, { cwd }): ReplayArgs => {
    if (values.agents === undefined) throw new UsageError("replay needs --agents FILE: the module with today's agent.");
    if (values.fromRun === undefined) throw new UsageError('replay needs --from-run ID: the stored run to replay (durable-agent list --dir DIR lists them).');
    return { command: 'replay', agents: values.agents, agent: values.agent, fromRun: values.fromRun, dir: values.dir ?? cwd, runTools: values.runTools, json: values.json };
  },
});
