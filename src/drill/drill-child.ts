/**
 * One play of a drill in a process of its own, for the sample killed by a real SIGKILL: the
 * agent's module loaded as the command loads it, the replies played in the scratch folder (its
 * working directory), killed with SIGKILL at the crash point given, or resumed. Every run() of a
 * tool appends the call's idempotency key to .drill-executions there, for the parent to count.
 * Started by sigkill-sample.ts with one JSON argument; not a command of its own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type AgentDefinition, isAgentDefinition } from '../agent/agent-definition.ts';
import { scriptedModel } from '../model/scripted-model.ts';
import { resumeRun, startRun } from '../runtime/run-api.ts';
import { openStore } from '../store/open-store.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { scriptReplies } from './drill-script.ts';

export interface ChildPlay {
  module: string;
  agent: string;
  replies: unknown;
  task: string;
  dir: string;
  /** Kill at this crash point; null: resume what the kill left. */
  killAt: string | null;
}

export const EXECUTIONS_FILE = '.drill-executions';

async function main(): Promise<void> {
  const play = JSON.parse(process.argv[2]!) as ChildPlay;
  const exported = (await import(pathToFileURL(play.module).href)) as Record<string, unknown>;
  const agent = Object.values(exported)
    .flatMap((value) => (Array.isArray(value) ? value : [value]))
    .find((value): value is AgentDefinition => isAgentDefinition(value) && value.name === play.agent);
  if (!agent) throw new Error(`${play.module} has no agent ${play.agent}`);
  process.chdir(play.dir);
  const tools: ToolDefinition[] = agent.tools.map((tool) => ({
    ...tool,
    run: (input: unknown, ctx: Parameters<ToolDefinition['run']>[1]) => {
      fs.appendFileSync(path.join(play.dir, EXECUTIONS_FILE), `${ctx.idempotencyKey}\n`);
      return tool.run(input, ctx);
    },
  }));
  const parts = {
    agent,
    tools,
    model: scriptedModel(scriptReplies(play.replies, 'the drill'), { name: `drill-${agent.name}` }),
    store: openStore({ dir: path.join(play.dir, '.durable-agent') }),
    command: 'drill',
  };
  if (play.killAt !== null) {
    await startRun({ ...parts, task: play.task, crashAfter: play.killAt, onCrash: () => process.kill(process.pid, 'SIGKILL') });
    process.exitCode = 3; // the crash point was not reached
  } else {
    const result = await resumeRun(parts);
    process.exitCode = result.status === 'failed' ? 1 : 0;
  }
}

await main();
