/** The fleet's commands, `db migrate`, `submit demo` and `worker`: their options and their parse. */
import type { ClearToolUsesOptions } from '../../compaction/clear-tool-uses.ts';
import type { CompactionOptions } from '../../compaction/compaction-settings.ts';
import type { Budget } from '../../../machines/agent-loop.types.ts';
import { command } from '../options/command.ts';
import { flagsNamed, option } from '../options/option.ts';
import { decisionTimeout, requireApproval, requiredApprovals } from '../options/approval.ts';
import { maxCostUsd, maxTotalTokens, readBudget } from '../options/budget.ts';
import { compactionOptions, readCompaction } from '../options/compaction.ts';
import { model, readRequest, requestOptions, type RequestArgs } from '../options/model.ts';
import { maxTurns } from '../options/start-resume.ts';
import { databaseUrl } from '../options/target.ts';
import { traceContent } from '../options/tracing.ts';
import { UsageError } from '../usage-error.ts';
import { agentsModule } from '../options/agents.ts';
import { tenant } from '../options/tenant.ts';
import { jitter, pace } from './demo.ts';

const TEN_MINUTES_MS = 600_000;

export interface DbArgs {
  command: 'db';
  action: 'migrate';
  databaseUrl: string | null;
}

export type SubmitArgs = SubmitDemoArgs | SubmitAgentArgs;

/** `submit --agent NAME --task TEXT`: one task for a registered agent, under its run id. */
export interface SubmitAgentArgs {
  command: 'submit';
  kind: 'agent';
  databaseUrl: string | null;
  agent: string;
  task: string;
  runId: string | undefined;
  tenant: string | undefined;
  allowUnknownAgent: boolean;
  maxTurns: number | undefined;
  requireApproval: string[] | 'side-effects' | undefined;
  decisionTimeoutMs: number | undefined;
  budget: Budget | undefined;
}

export interface SubmitDemoArgs {
  command: 'submit';
  kind: 'demo';
  databaseUrl: string | null;
  count: number;
  model: string | undefined;
  maxTurns: number | undefined;
  paceMs: number;
  jitterMs: number;
  /** Pinned in each run (wait is always false in a fleet). */
  requireApproval: string[] | 'side-effects' | undefined;
  decisionTimeoutMs: number | undefined;
  budget: Budget | undefined;
  compaction: CompactionOptions | undefined;
  clearToolUses: ClearToolUsesOptions | undefined;
}

export interface WorkerArgs {
  command: 'worker';
  databaseUrl: string | null;
  /** --agents FILE: the module whose agent definitions this worker drives (besides demo runs). */
  agents: string | undefined;
  runConcurrency: number;
  exitWhenIdle: boolean;
  leaseMs: number | undefined;
  pollIntervalMs: number | undefined;
  request: RequestArgs;
  traceContent: boolean;
  /** --webhook-url URL: where this worker sends the signed events of runs at rest; the secret is the environment's (DURABLE_AGENT_WEBHOOK_SECRET). */
  webhookUrl: string | undefined;
  /** --webhook-include-content: a sealed run's event carries its answer too (by default, metadata only). */
  webhookIncludeContent: boolean;
}

export const dbSpec = command({
  name: 'db',
  words: ['migrate'],
  summary: "create or migrate the fleet's PostgreSQL schema",
  description: 'Brings the schema of the fleet database to this version (also done on first use by submit and worker).',
  options: [databaseUrl],
  examples: ['durable-agent db migrate --database-url postgresql://user@db-host:5432/agents'],
  parse: (values): DbArgs => ({ command: 'db', action: 'migrate', databaseUrl: values.databaseUrl ?? null }),
});

/** What `submit` for an agent gives its run, over the agent's own. */
const agentOnly = new Set(['agent', 'task', 'run', 'tenant', 'allowUnknownAgent']);
const demoOnly = new Set(['count', 'model', 'paceMs', 'jitterMs', 'compact', 'contextWindow', 'compactTriggerRatio', 'clearToolUses', 'clearTriggerTokens', 'clearKeep', 'clearAtLeast', 'clearExcludeTools', 'clearToolInputs']);

export const submitSpec = command({
  name: 'submit',
  words: ['demo'],
  wordsOptional: true,
  synopsis: 'submit (--agent NAME --task TEXT [--run ID] | demo [--count N]) [options]',
  summary: "queue a task for one of the fleet's agents, or demo runs, for the workers",
  description:
    'With --agent, queues one run of TASK for the agent of that name (a worker started with --agents FILE that\n' +
    'has it takes it up) and prints its id; with --run ID, a submit that finds that run queued already creates\n' +
    'nothing and prints it again (a retry never queues two), and one with another task or agent is refused.\n' +
    'The limits and the approval rule given are the run\'s own, over the agent\'s. With demo, queues COUNT demo runs.',
  options: [
    databaseUrl,
    option({ key: 'agent', type: 'string', value: 'NAME', help: 'the agent that runs the task (as its definition names it)', api: 'SubmitRunOptions.agent' }),
    option({ key: 'task', type: 'string', value: 'TEXT', help: "the run's task (its first user message)", api: 'SubmitRunOptions.task' }),
    option({ key: 'run', type: 'string', value: 'ID', help: "the run's id: a submit under an id that is queued already creates nothing (default: a new one)", api: 'SubmitRunOptions.runId' }),
    { ...tenant, api: 'SubmitRunOptions.tenant' },
    option({ key: 'allowUnknownAgent', type: 'boolean', help: 'queue it although no worker has registered that agent yet', api: 'SubmitRunOptions.allowUnknownAgent' }),
    option({ key: 'count', type: 'integer', value: 'N', help: 'how many demo runs to queue', min: 1, max: 10_000, default: 1 }),
    model('a real Claude model for demo runs instead of the scripted one (the workers need ANTHROPIC_API_KEY)'),
    { ...maxTurns, help: 'each run stops cleanly after N tool-using turns', defaultText: "the agent's, or 20" },
    pace,
    jitter,
    { ...requireApproval, help: `${requireApproval.help}; pinned in each run: a waiting run holds no lease and is taken up once decided (approve --run ID)` },
    decisionTimeout,
    { ...maxCostUsd, help: "each run's worker stops it (final state stoppedAtBudget) before a model call once it has cost USD dollars at list prices (needs a model with a price)" },
    { ...maxTotalTokens, help: "each run's worker stops it (final state stoppedAtBudget) before a model call once it has used N tokens" },
    ...compactionOptions,
  ],
  examples: [
    'durable-agent submit --agent billing --task "Invoice ACME for 120 EUR." --run invoice-acme-120',
    'durable-agent submit demo --count 30 --pace 100ms',
    'durable-agent submit demo --require-approval write_report',
    'durable-agent submit demo --count 10 --max-total-tokens 20000 --compact client --context-window 8000',
  ],
  parse: (values, { words }): SubmitArgs => {
    const given = (keys: Set<string>) => [...keys].filter((key) => {
      const value = (values as Record<string, unknown>)[key];
      return value !== undefined && value !== false && !(key === 'count' && value === 1) && !((key === 'paceMs' || key === 'jitterMs') && value === 0);
    });
    if (values.agent !== undefined) {
      if (words.length > 0) throw new UsageError('submit takes either demo or --agent NAME, not both: give one of them.');
      const demoFlags = given(demoOnly);
      if (demoFlags.length > 0) throw new UsageError(`${flagsNamed(demoFlags)} ${demoFlags.length === 1 ? 'is' : 'are'} for demo runs: an agent's run takes its model and context settings from its definition.`);
      if (values.task === undefined || values.task.trim() === '') throw new UsageError('submit --agent NAME needs --task TEXT: what the run is to do.');
      return {
        command: 'submit',
        kind: 'agent',
        databaseUrl: values.databaseUrl ?? null,
        agent: values.agent,
        task: values.task,
        runId: values.run,
        tenant: values.tenant,
        allowUnknownAgent: values.allowUnknownAgent,
        maxTurns: values.maxTurns,
        requireApproval: requiredApprovals(values.requireApproval),
        decisionTimeoutMs: values.decisionTimeoutMs,
        budget: readBudget(values),
      };
    }
    if (words.length === 0) throw new UsageError('submit needs --agent NAME --task TEXT (a task for an agent) or demo (demo runs). Run durable-agent submit --help for usage.');
    const agentFlags = given(agentOnly);
    if (agentFlags.length > 0) throw new UsageError(`--task, --run, --tenant and --allow-unknown-agent are for a run of an agent (submit --agent NAME), not for demo runs.`);
    return {
      command: 'submit',
      kind: 'demo',
      databaseUrl: values.databaseUrl ?? null,
      count: values.count,
      model: values.model,
      maxTurns: values.maxTurns,
      paceMs: values.paceMs,
      jitterMs: values.jitterMs,
      requireApproval: requiredApprovals(values.requireApproval),
      decisionTimeoutMs: values.decisionTimeoutMs,
      budget: readBudget(values),
      ...readCompaction(values),
    };
  },
});

export const workerSpec = command({
  name: 'worker',
  words: [],
  summary: "run the fleet's queued runs; take over the runs of workers that died",
  description:
    'Claims queued runs (and runs whose lease expired) and drives them, K at a time, until stopped with\n' +
    'SIGTERM or Ctrl-C (each run is saved and its lease released).',
  options: [
    databaseUrl,
    { ...agentsModule, help: 'a module of agent definitions (its exports made with defineAgent) whose runs this worker drives, besides demo runs', api: 'WorkerOptions.agents' },
    option({
      key: 'runConcurrency',
      type: 'integer',
      value: 'K',
      help: 'how many runs this worker drives at once (each run still runs the calls of a reply as its own settings say)',
      min: 1,
      max: 256,
      default: 1,
      api: 'WorkerOptions.runConcurrency',
      aliases: [{ flag: 'concurrency' }],
    }),
    option({ key: 'exitWhenIdle', type: 'boolean', help: 'stop when the queue is empty', api: 'WorkerOptions.exitWhenIdle' }),
    option({
      key: 'leaseMs',
      type: 'duration',
      value: 'DURATION',
      help: "how long a run's lease lasts unless renewed; a worker renews it every third of that",
      min: 1_000,
      max: TEN_MINUTES_MS,
      defaultText: '15s',
      api: 'WorkerOptions.leaseMs',
      aliases: [{ flag: 'lease-ms', bareMilliseconds: true }],
    }),
    option({
      key: 'pollIntervalMs',
      type: 'duration',
      value: 'DURATION',
      help: 'how often an idle worker looks at the queue (it also wakes at once when runs are queued or freed)',
      min: 10,
      max: 60_000,
      defaultText: '500ms',
      api: 'WorkerOptions.pollIntervalMs',
      aliases: [{ flag: 'poll-ms', bareMilliseconds: true }],
    }),
    option({
      key: 'webhookUrl',
      type: 'string',
      value: 'URL',
      help: 'POST a signed event to URL each time a run comes to rest (done, failed, cancelled, waiting for a person, stopped at a limit), at least once; the secret that signs it is read from DURABLE_AGENT_WEBHOOK_SECRET',
      api: 'webhook.url',
    }),
    option({
      key: 'webhookIncludeContent',
      type: 'boolean',
      help: "with --webhook-url: a sealed run's event carries its answer too (by default, metadata only)",
      api: 'webhook.includeContent',
    }),
    ...requestOptions,
    traceContent,
  ],
  examples: [
    'durable-agent worker --run-concurrency 4 --exit-when-idle',
    'durable-agent worker --agents ./agents.mjs --run-concurrency 8',
    'DURABLE_AGENT_WEBHOOK_SECRET="$(cat secret)" durable-agent worker --webhook-url https://example.com/hook',
  ],
  parse: (values): WorkerArgs => {
    if (values.webhookIncludeContent && values.webhookUrl === undefined) throw new UsageError('--webhook-include-content is about the events sent to --webhook-url: give --webhook-url URL too.');
    return {
    command: 'worker',
    databaseUrl: values.databaseUrl ?? null,
    agents: values.agents,
    runConcurrency: values.runConcurrency,
    exitWhenIdle: values.exitWhenIdle,
    leaseMs: values.leaseMs,
    pollIntervalMs: values.pollIntervalMs,
    request: readRequest(values),
    traceContent: values.traceContent,
    webhookUrl: values.webhookUrl,
    webhookIncludeContent: values.webhookIncludeContent,
    };
  },
});
