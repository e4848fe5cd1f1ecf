/** `durable-agent drill`: the user's agent crash-tested at every crash point of a path. */
import fs from 'node:fs';
import path from 'node:path';
import type { AgentDefinition } from '../../agent/agent-definition.ts';
import { type DrillOptions, type DrillScratch, drillAgent } from '../../drill/drill.ts';
import { drillLines, drillMarkdown } from '../../drill/drill-report.ts';
import { DrillScriptError, recordedReplies, scriptReplies } from '../../drill/drill-script.ts';
import { foldJournal } from '../../store/fold-journal.ts';
import { AgentsModuleError, loadAgentsModule } from '../agents-module.ts';
import type { DrillArgs } from '../specs/drill.ts';
import { fileStoreOf } from '../run-store.ts';
import type { Writers } from '../plain-reporter.ts';
import { UsageError } from '../usage-error.ts';

export async function drillCommand(args: DrillArgs, writers: Writers, cwd = process.cwd()): Promise<number> {
  const { agents, exported } = await loadAgentsModule(args.agents, cwd);
  const agent = pickAgent(agents, args.agents, args.agent);
  const { replies, source, task } = await repliesOf(args, cwd);
  const hooks = hooksOf(exported, args.agents);
  const home = process.cwd();
  const options: DrillOptions = {
    agent,
    replies,
    source,
    task,
    // Each play's scratch folder is the tools' working directory, as a fresh project would be.
    setup: async (scratch: DrillScratch) => {
      process.chdir(scratch.dir);
      await hooks.setup?.(scratch);
    },
    teardown: async (scratch: DrillScratch) => {
      try {
        await hooks.teardown?.(scratch);
      } finally {
        process.chdir(home);
      }
    },
    count: hooks.count,
    onProgress: args.json ? undefined : (line) => writers.err(line),
  };
  const report = await drillAgent(options);
  if (args.out) {
    const out = path.resolve(cwd, args.out);
    fs.writeFileSync(out, drillMarkdown(report));
    fs.writeFileSync(out.replace(/(\.md)?$/, '.json'), `${JSON.stringify(report, null, 2)}\n`);
  }
  if (args.json) writers.out(JSON.stringify(report, null, 2));
  else for (const line of drillLines(report)) writers.out(line);
  return report.exitCode;
}

/** The agent of a module a drill or a replay is about: the one named, or its only one. */
export function pickAgent(agents: AgentDefinition[], file: string, name: string | undefined): AgentDefinition {
  if (name !== undefined) {
    const named = agents.find((agent) => agent.name === name);
    if (!named) throw new AgentsModuleError(file, `it has no agent named ${name} (its agents: ${agents.map((agent) => agent.name).join(', ')})`);
    return named;
  }
  if (agents.length > 1) throw new UsageError(`${file} exports ${agents.length} agents (${agents.map((agent) => agent.name).join(', ')}): say which with --agent NAME.`);
  return agents[0]!;
}

async function repliesOf(args: DrillArgs, cwd: string) {
  if (args.repliesFile !== undefined) {
    const file = path.resolve(cwd, args.repliesFile);
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (error) {
      throw new DrillScriptError(args.repliesFile, `it cannot be read as JSON (${(error as Error).message})`);
    }
    return { replies: scriptReplies(parsed, args.repliesFile), source: args.repliesFile, task: undefined };
  }
  const store = fileStoreOf(args.dir, args.fromRun!);
  const source = `the run ${args.fromRun} in ${store.location}`;
  if (!(await store.exists())) throw new DrillScriptError(source, 'there is no such run (durable-agent list --dir DIR lists them)');
  const view = foldJournal(store.location, await store.load());
  return { replies: recordedReplies(view.context.messages, source), source, task: view.context.task };
}

/** What a drill takes from the module besides its agents; a hook that is not a function is refused. */
function hooksOf(exported: Record<string, unknown>, file: string): Pick<DrillOptions, 'setup' | 'teardown' | 'count'> {
  const hooks: Pick<DrillOptions, 'setup' | 'teardown' | 'count'> = {};
  for (const name of ['setup', 'teardown', 'count'] as const) {
    const value = exported[name];
    if (value === undefined) continue;
    if (typeof value !== 'function') throw new AgentsModuleError(file, `its export ${name} is not a function`);
    (hooks as Record<string, unknown>)[name] = value;
  }
  return hooks;
}
