/** `durable-agent run`: a real model on the user's task, with the tools --tools names (the file tools by default) in a directory; with --agents, the user's own agent (run-agent.ts). */
import fs from 'node:fs';
import path from 'node:path';
import { checkToolsFor, modelSetupOf, type StoredRun, storedRunOf } from '../model-setup.ts';
import type { RunArgs } from '../args.ts';
import { UsageError } from '../usage-error.ts';
import { driveCliRun } from '../drive-run.ts';
import { approvalResumeWords } from '../options/approval.ts';
import type { Writers } from '../plain-reporter.ts';
import { resumeAskedOf, runOptionsOf } from '../run-flags.ts';
import { RunNeedsAgentError } from '../errors.ts';
import { realModel } from '../real-model.ts';
import { agentResumeCommand } from '../resume-command.ts';
import { DEFAULT_TOOL_SETS, toolSetsOfRun, toolsOfSets } from '../run-tools.ts';
import { cliCommand, dirWords } from '../../words/shell-command.ts';

/** run always needs a real model: without a key the way on is the key, or the demo. */
const RUN_WITHOUT_KEY = 'Set the key and run the same command again; `durable-agent demo` shows the loop with a scripted model that needs none.';

export async function runCommand(args: RunArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  if (args.agents !== undefined) return (await import('./run-agent.ts')).runAgentCommand({ ...args, agents: args.agents }, env, writers);
  const dir = path.resolve(args.dir);
  const system = args.systemFile === undefined ? null : readSystemPrompt(args.systemFile);
  const stored = await storedRunOf(dir, args.runId, args.resume, args.fresh);
  if (stored?.header.agent) throw new RunNeedsAgentError(stored.location, stored.header.agent.name, agentResumeCommand(env, dir, args.runId, stored.header));
  const modelName = args.model ?? startingModelOf(stored);
  // The request options are the run's own (pinned when it started): a resume asks the same way.
  const setup = modelSetupOf(modelName, args.claude, stored, args.maxTokens, null);
  const model = await realModel(modelName, env, args.request, RUN_WITHOUT_KEY, args.stream, setup.options);
  const mcpConfig = args.mcpConfigFile === undefined ? null : path.resolve(args.mcpConfigFile);
  const { approval } = args;
  const resumeCommand = cliCommand(env, [
    'run',
    '--resume',
    '--model',
    modelName,
    ...dirWords(dir, args.runId),
    ...(mcpConfig ? ['--mcp-config-file', mcpConfig] : []),
    ...approvalResumeWords(approval, args.resume),
    ...setup.resumeWords,
  ]);
  if (args.resume && system !== null) writers.err('[resume] --system-file is ignored: the run keeps the system prompt it started with.');
  for (const note of setup.notes) writers.err(note);
  // Loaded only when asked for: the MCP SDK is an optional peer dependency. Stdio servers are also
  // stopped when the process exits early (an interrupt, a simulated crash): see mcp/connection.ts.
  const mcp = mcpConfig ? await (await import('../../mcp/mcp-tools.ts')).mcpTools(mcpConfig, { env, log: (line) => writers.err(line) }) : null;
  // A resume offers the tools the run started with (its header names them) unless --tools says otherwise.
  const sets = args.tools ?? (stored?.header.startedBy ? toolSetsOfRun(stored.header.startedBy.tools) : DEFAULT_TOOL_SETS);
  const tools = [...toolsOfSets(dir, sets, { bashTimeoutMs: args.toolTimeoutMs }), ...(mcp?.tools ?? [])];
  try {
    checkToolsFor(modelName, setup.options, args.maxTokens, tools.map((tool) => tool.name));
  } catch (error) {
    await mcp?.close();
    throw error;
  }
  return driveCliRun({
    command: 'run',
    dir,
    runId: args.runId,
    env,
    writers,
    model,
    tools,
    output: { plain: args.plain, verbose: args.verbose },
    resumeCommand,
    resume: resumeAskedOf(args),
    start: args.resume
      ? null
      : { task: args.task!, system, fresh: args.fresh, maxTurns: args.maxTurns, tenant: args.tenant, prepare: () => fs.mkdirSync(dir, { recursive: true }) },
    options: runOptionsOf(args),
    traceContent: args.traceContent,
    wait: approval.wait,
  }).finally(() => mcp?.close());
}

/** The model the stored run started with (its header says), for a resume that names none. */
function startingModelOf(stored: StoredRun | null): string {
  const model = stored?.header.startedBy?.model;
  if (!model) {
    const where = stored ? `The run in ${stored.location}` : 'The run';
    throw new UsageError(`${where} does not say which model started it (an earlier version wrote it): give --model NAME with --resume.`);
  }
  return model;
}

function readSystemPrompt(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--system-file ${file}: the file cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
  }
}
