/**
 * `durable-agent run --agents FILE`: the user's own agent (a defineAgent definition of the module
 * worker and drill load), run as `run` runs its file tools: the live view, --resume, the budget,
 * approval and compaction flags. Its runs are kept by id in DIR's folder of runs.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type AgentDefinition, agentModelName } from '../../agent/agent-definition.ts';
import type { Model } from '../../model/model.ts';
import type { GivenRequest } from '../../model/pinned-request.ts';
import { normalServerTools } from '../../model/server-tools.ts';
import { checkAgentPin } from '../../runtime/agent-run.ts';
import { cliCommand, dirWords } from '../../words/shell-command.ts';
import { loadAgents, pickAgent } from '../agents-module.ts';
import type { RunArgs } from '../args.ts';
import { driveCliRun } from '../drive-run.ts';
import { RunWithoutAgentError } from '../errors.ts';
import { modelSetupOf, type StoredRun, storedRunOf } from '../model-setup.ts';
import type { ClaudeArgs } from '../options/model.ts';
import { approvalResumeWords } from '../options/approval.ts';
import type { Writers } from '../plain-reporter.ts';
import { resumeAskedOf, runOptionsOf } from '../run-flags.ts';
import { realModel } from '../real-model.ts';
import { fileStoreOf } from '../run-store.ts';
import { UsageError } from '../usage-error.ts';

/** A model given by name needs the key; the agent's own Model (a scripted one) does not. */
const AGENT_WITHOUT_KEY = 'Set it and run the same command again.';

export async function runAgentCommand(args: RunArgs & { agents: string }, env: NodeJS.ProcessEnv, writers: Writers, cwd = process.cwd()): Promise<number> {
  const dir = path.resolve(args.dir);
  const module = path.resolve(cwd, args.agents);
  const agent = pickAgent(await loadAgents(args.agents, cwd), args.agents, args.agent);
  if (args.resume && args.runId === null && !(await fileStoreOf(dir, null).exists())) {
    throw new UsageError(`run --agents --resume needs --run ID: the run to take up, as run printed it when it started (${dir} holds no run of its own; durable-agent list lists its runs).`);
  }
  // A start names its run, or gets a new id: an agent's runs are kept by id, side by side.
  const runId = args.runId ?? (args.resume ? null : newRunId(agent));
  const stored = await storedRunOf(dir, runId, args.resume, args.fresh);
  if (stored) checkRunOfAgent(stored, agent);
  const { model, resumeWords, notes } = await agentModelOf(agent, args, stored, env);
  const { approval } = args;
  const resumeCommand = cliCommand(env, [
    'run',
    '--resume',
    '--agents',
    module,
    '--agent',
    agent.name,
    ...dirWords(dir, runId),
    ...(args.model !== undefined ? ['--model', args.model] : []),
    ...approvalResumeWords(approval, args.resume),
    ...resumeWords,
  ]);
  for (const note of notes) writers.err(note);
  return driveCliRun({
    command: 'run',
    dir,
    runId,
    env,
    writers,
    model,
    tools: [...agent.tools],
    agent: { definition: agent, module },
    output: { plain: args.plain, verbose: args.verbose },
    resumeCommand,
    startedLine: args.runId === null && !args.resume ? `[run] a new run of the agent ${agent.name}: ${runId}; resume it with: ${resumeCommand}` : undefined,
    resume: resumeAskedOf(args),
    // The system prompt, MAX_TURNS and policies not given here are the agent's (startRun fills them in).
    start: args.resume ? null : { task: args.task!, system: null, fresh: args.fresh, maxTurns: args.maxTurns, tenant: args.tenant, prepare: () => fs.mkdirSync(dir, { recursive: true }) },
    options: runOptionsOf(args),
    traceContent: args.traceContent,
    wait: approval.wait,
  });
}

/** `billing-3f9a1c2e`: the agent's name and 32 random bits, a run id of the folder's form. */
function newRunId(agent: AgentDefinition): string {
  return `${agent.name}-${randomBytes(4).toString('hex')}`;
}

/** A stored run under the id is taken up only by the agent that started it (at its version, or one it declares compatible). */
function checkRunOfAgent(stored: StoredRun, agent: AgentDefinition): void {
  const { header, location } = stored;
  if (!header.agent) throw new RunWithoutAgentError(location, header.startedBy?.command ?? 'api', agent.name);
  checkAgentPin(location, header, agent);
}

/**
 * The model the run is driven by: --model, or the one a stored run was started with when that
 * was not the agent's, or the agent's (a name made into the real model with the key from the
 * environment and the request options of the flags; a Model of the module's own, as it is).
 */
async function agentModelOf(agent: AgentDefinition, args: RunArgs, stored: StoredRun | null, env: NodeJS.ProcessEnv): Promise<{ model: Model; resumeWords: string[]; notes: string[] }> {
  const started = stored?.header.startedBy?.model;
  const name = args.model ?? (started !== undefined && started !== agentModelName(agent) ? started : typeof agent.model === 'string' ? agent.model : null);
  if (name === null) {
    if (args.claude) {
      throw new UsageError(
        `The agent ${agent.name} has a model of its own (${agentModelName(agent)}), not a Claude model by name: the request options (--thinking, --temperature, the server tools, --price…) are for a model given by name. Give --model NAME, or set them on the agent's model.`,
      );
    }
    return { model: agent.model as Model, resumeWords: [], notes: [] };
  }
  const claude = withAgentServerTools(args.claude, agent);
  const setup = modelSetupOf(name, claude, stored, args.maxTokens ?? agent.maxTokens, agent.tools.map((tool) => tool.name));
  const model = await realModel(name, env, args.request, AGENT_WITHOUT_KEY, args.stream, setup.options);
  return { model, resumeWords: setup.resumeWords, notes: setup.notes };
}

/** The agent's server tools, as if given by their flags (pinned with the run the same way); flags given replace them. */
function withAgentServerTools(claude: ClaudeArgs | undefined, agent: AgentDefinition): ClaudeArgs | undefined {
  const serverTools = normalServerTools(agent.serverTools) as GivenRequest['serverTools'];
  if (!serverTools || claude?.request.serverTools !== undefined) return claude;
  return { price: undefined, allowRequestChange: false, ...claude, request: { ...claude?.request, serverTools } };
}
