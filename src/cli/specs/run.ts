/** `durable-agent run`: its options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { agentOfModule, agentsModule } from '../options/agents.ts';
import { allowQuestions, approvalOptions, readApproval } from '../options/approval.ts';
import { budgetOptions, readBudget } from '../options/budget.ts';
import { compactionOptions, readCompaction } from '../options/compaction.ts';
import { claudeOptions, maxTokens, model, noStream, readClaude, readRequest, requestOptions } from '../options/model.ts';
import { outputOptions } from '../options/output.ts';
import { readStartResume, startResumeOptions } from '../options/start-resume.ts';
import { fileRun, readFileRun, runDir } from '../options/target.ts';
import { readToolSets, toolConcurrency, tools, toolTimeout } from '../options/tools.ts';
import { traceContent } from '../options/tracing.ts';
import { tenant } from '../options/tenant.ts';

export const runSpec = command({
  name: 'run',
  words: [],
  synopsis: 'run (--model NAME | --agents FILE [--agent NAME]) (--task TEXT | --resume) [options]',
  summary: 'a real model on your task with the file tools, or your own agent (--agents FILE)',
  description:
    'Gives a real Claude model (ANTHROPIC_API_KEY, read from the environment only; ANTHROPIC_BASE_URL points\n' +
    'elsewhere) your task and tools on the files of DIR (--tools; the file tools by default). With --agents FILE it\n' +
    'runs your own agent instead: one of the defineAgent definitions the module exports (as worker and drill load it),\n' +
    'with its model, system prompt, tools and policies (the flags given override its policies), its runs kept by id\n' +
    '(a new id unless --run names one). Kill it, or lose the network, and go on with --resume.',
  options: [
    option({ key: 'task', type: 'string', value: 'TEXT', help: 'what to do (stored with the run: a resume takes it from there)', api: 'StartOptions.task' }),
    model("the Claude model, e.g. claude-sonnet-5-5 (required without --agents, where it replaces the agent's; a resume takes the one the run started with)"),
    { ...agentsModule, help: "run your own agent: the module of its definition (exports made with defineAgent), loaded by plain node; its tools run in the current directory" },
    { ...agentOfModule, help: 'with --agents: which agent of the module (needed when it exports several)' },
    runDir,
    fileRun,
    tenant,
    option({
      key: 'systemFile',
      type: 'string',
      value: 'FILE',
      help: 'the system prompt, read from FILE (stored with the run)',
      api: 'StartOptions.system',
      readsFile: true,
      aliases: [{ flag: 'system' }],
    }),
    option({
      key: 'mcpConfigFile',
      type: 'string',
      value: 'FILE',
      help: "an .mcp.json file: its servers' tools join the file tools as mcp__<server>__<tool> (give it again with --resume)",
      api: 'mcpTools.config',
      readsFile: true,
      aliases: [{ flag: 'mcp-config' }],
    }),
    ...startResumeOptions,
    maxTokens,
    ...budgetOptions,
    ...requestOptions,
    ...claudeOptions,
    tools,
    toolConcurrency,
    toolTimeout,
    noStream,
    ...compactionOptions,
    ...approvalOptions,
    allowQuestions,
    ...outputOptions,
    traceContent,
  ],
  examples: [
    'durable-agent run --model claude-sonnet-5-5 --dir my-project --task "Summarise notes.md into summary.md"',
    'durable-agent run --model claude-sonnet-5-5 --task "Tidy up" --require-approval side-effects --no-wait',
    'durable-agent run --dir my-project --resume',
    'durable-agent run --model claude-sonnet-5-5 --task "Tidy up" --max-cost-usd 2   # exit 8 once $2 is spent',
    'durable-agent run --model claude-sonnet-5-5 --task "Plan the refactor" --thinking 8000 --max-tokens 16000',
    'durable-agent run --agents ./agents.mjs --agent billing --task "Invoice ACME for 120 EUR." --run acme',
    'durable-agent run --agents ./agents.mjs --agent billing --resume --run acme',
  ],
  parse: (values, { cwd }) => {
    const shared = readStartResume(values);
    const { task } = values;
    if (shared.resume && task !== undefined) throw new UsageError('--task is stored with the run: --resume takes it from there. Drop --task, or start a new run with --fresh.');
    if (!shared.resume && task === undefined) throw new UsageError('run needs --task "what to do" (or --resume to go on with a stored run).');
    if (shared.resume && values.tenant !== undefined) throw new UsageError('--tenant is pinned when a run starts: --resume goes on with the tenant it started with. Drop --tenant.');
    const runId = readFileRun(values.run);
    if (values.agents !== undefined) checkAgentRun(values);
    else if (values.agent !== undefined) throw new UsageError('--agent NAME picks an agent of the module --agents FILE names: give --agents FILE too.');
    // A resume takes the model from the run's journal (the model it started with) unless one is given; an agent has its own.
    else if (values.model === undefined && !shared.resume) {
      throw new UsageError('run needs --model NAME (a Claude model, e.g. claude-sonnet-5-5), or --agents FILE for your own agent; the demo is the command that runs without one.');
    }
    return {
      command: 'run' as const,
      dir: values.dir ?? cwd,
      runId,
      task,
      tenant: values.tenant,
      model: values.model,
      agents: values.agents,
      agent: values.agent,
      systemFile: values.systemFile,
      mcpConfigFile: values.mcpConfigFile,
      ...shared,
      maxTokens: values.maxTokens,
      plain: values.plain,
      verbose: values.verbose,
      request: readRequest(values),
      claude: readClaude(values, shared.resume),
      traceContent: values.traceContent,
      approval: readApproval(values, values.allowQuestions),
      tools: readToolSets(values.tools),
      toolConcurrency: values.toolConcurrency,
      toolTimeoutMs: values.toolTimeoutMs,
      stream: !values.noStream,
      budget: readBudget(values),
      ...readCompaction(values),
    };
  },
});

export type RunArgs = ReturnType<typeof runSpec.parse>;

/** What the agent's definition gives is not given again on the command line. */
function checkAgentRun(values: { systemFile: string | undefined; mcpConfigFile: string | undefined; tools: string | undefined }): void {
  const theirs = [
    ['--system-file', values.systemFile, 'system prompt'],
    ['--tools', values.tools, 'tools'],
    ['--mcp-config-file', values.mcpConfigFile, 'tools'],
  ] as const;
  for (const [flag, given, what] of theirs) {
    if (given !== undefined) throw new UsageError(`${flag} is not for --agents: the agent's definition gives its ${what}. Change the definition in the module, or drop ${flag}.`);
  }
}
