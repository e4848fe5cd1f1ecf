/** The fleet's commands, `db migrate`, `submit demo` and `worker`: their options and their parse. */
import type { ClearToolUsesOptions } from '../../compaction/clear-tool-uses.ts';
import type { CompactionOptions } from '../../compaction/compaction-settings.ts';
import type { Budget } from '../../../machines/agent-loop.types.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { decisionTimeout, requireApproval, requiredApprovals } from '../options/approval.ts';
import { maxCostUsd, maxTotalTokens, readBudget } from '../options/budget.ts';
import { compactionOptions, readCompaction } from '../options/compaction.ts';
import { model, readRequest, requestOptions, type RequestArgs } from '../options/model.ts';
import { maxTurns } from '../options/start-resume.ts';
import { databaseUrl } from '../options/target.ts';
import { traceContent } from '../options/tracing.ts';
import { jitter, pace } from './demo.ts';

const TEN_MINUTES_MS = 600_000;

export interface DbArgs {
  command: 'db';
  action: 'migrate';
  databaseUrl: string | null;
}

export interface SubmitArgs {
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
  runConcurrency: number;
  exitWhenIdle: boolean;
  leaseMs: number | undefined;
  pollIntervalMs: number | undefined;
  request: RequestArgs;
  traceContent: boolean;
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

export const submitSpec = command({
  name: 'submit',
  words: ['demo'],
  summary: 'queue demo runs for the workers of a fleet',
  description: 'Queues COUNT demo runs in the fleet database and prints their ids; workers pick them up.',
  options: [
    databaseUrl,
    option({ key: 'count', type: 'integer', value: 'N', help: 'how many runs to queue', min: 1, max: 10_000, default: 1 }),
    model('a real Claude model instead of the scripted one (the workers need ANTHROPIC_API_KEY)'),
    { ...maxTurns, help: 'each run stops cleanly after N tool-using turns', defaultText: '20' },
    pace,
    jitter,
    { ...requireApproval, help: requireApproval.help + '; pinned in each run: a waiting run holds no lease and is taken up once decided (approve --run ID)' },
    decisionTimeout,
    { ...maxCostUsd, help: "each run's worker stops it (final state stoppedAtBudget) before a model call once it has cost USD dollars at list prices (needs --model with a price)" },
    { ...maxTotalTokens, help: "each run's worker stops it (final state stoppedAtBudget) before a model call once it has used N tokens" },
    ...compactionOptions,
  ],
  examples: [
    'durable-agent submit demo --count 30 --pace 100ms',
    'durable-agent submit demo --require-approval write_report',
    'durable-agent submit demo --count 10 --max-total-tokens 20000 --compact client --context-window 8000',
  ],
  parse: (values): SubmitArgs => ({
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
  }),
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
    ...requestOptions,
    traceContent,
  ],
  examples: ['durable-agent worker --run-concurrency 4 --exit-when-idle'],
  parse: (values): WorkerArgs => ({
    command: 'worker',
    databaseUrl: values.databaseUrl ?? null,
    runConcurrency: values.runConcurrency,
    exitWhenIdle: values.exitWhenIdle,
    leaseMs: values.leaseMs,
    pollIntervalMs: values.pollIntervalMs,
    request: readRequest(values),
    traceContent: values.traceContent,
  }),
});
