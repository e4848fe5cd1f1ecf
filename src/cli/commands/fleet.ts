/** The fleet commands: migrate the schema, submit runs, run a worker, list runs. */
import { awaitedRunsWords } from '../../awaits/wait-words.ts';
import type { AgentStateName } from '../../../machines/agent-loop.types.ts';
import { type Database, DEFAULT_LEASE_MS, describeDatabase, migrate, openDatabase, openPool } from '../../store/pg/index.ts';
import { databaseUrlOf } from '../../store/pg/pool.ts';
import { type DemoRunSpec, type QueuedRun, submitRuns } from '../../fleet/run-queue.ts';
import { contentWords } from '../../words/sealed-words.ts';
import type { FleetRunSummary } from '../../fleet/fleet-summary.ts';
import { listRuns } from '../../fleet/list-runs.ts';
import { checkDecisionPolicy } from '../../awaits/needs-decision.ts';
import { fleetDemoTools } from '../../fleet/fleet-demo-tools.ts';
import { SCRIPTED_DEMO_MODEL, scriptedDemoModel, Worker } from '../../fleet/worker.ts';
import { checkedRunLimits } from '../../fleet/run-limits.ts';
import { raiseWords } from '../../fleet/raise-run.ts';
import { DEFAULT_MAX_TURNS } from '../../runtime/run-api.ts';
import type { DbArgs, StatusArgs, SubmitAgentArgs, SubmitArgs, WorkerArgs } from '../args.ts';
import { submitRun } from '../../fleet/submit-run.ts';
import { loadAgents } from '../agents-module.ts';
import { EXIT } from '../exit-codes.ts';
import { UsageError } from '../usage-error.ts';
import { tableLines } from '../../words/format.ts';
import { withTenants } from '../../words/tenant-column.ts';
import type { Writers } from '../plain-reporter.ts';
import { realModel } from '../real-model.ts';
import { cliCommand, databaseWords } from '../../words/shell-command.ts';
import { openTraceExport, traceOptions } from '../trace-export.ts';
import { commandLineKeys } from '../command-line-keys.ts';

export async function dbCommand(args: DbArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const url = databaseUrlOf(args.databaseUrl, env, 'db migrate');
  const pool = openPool(url, 1);
  try {
    const { from, to } = await migrate(pool);
    writers.out(from === to ? `schema of ${describeDatabase(url)} is at version ${to}: nothing to do` : `schema of ${describeDatabase(url)} migrated from version ${from} to ${to}`);
    return EXIT.done;
  } finally {
    await pool.end();
  }
}

export async function submitCommand(args: SubmitArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  if (args.kind === 'agent') return submitAgentCommand(args, env, writers);
  const url = databaseUrlOf(args.databaseUrl, env, 'submit');
  const pool = await openDatabase(url, 2);
  try {
    const model = args.model ?? null;
    const spec: DemoRunSpec = { kind: 'demo', model, maxTurns: args.maxTurns ?? DEFAULT_MAX_TURNS, paceMs: args.paceMs, jitterMs: args.jitterMs };
    if (args.requireApproval !== undefined) spec.requireApproval = checkedApprovals(pool, args.requireApproval);
    if (args.decisionTimeoutMs !== undefined) spec.decisionTimeoutMs = args.decisionTimeoutMs;
    const { budget, compaction, clearToolUses } = args;
    Object.assign(spec, checkedRunLimits(model, SCRIPTED_DEMO_MODEL, demoToolNames(pool), { budget, compaction, clearToolUses }));
    const ids = await submitRuns(pool, spec, args.count);
    for (const id of ids) writers.out(id);
    writers.err(`[submit] ${ids.length} demo run(s) queued in ${describeDatabase(url)}; start workers with: ${cliCommand(env, ['worker', ...databaseWords(args.databaseUrl)])}`);
    return EXIT.done;
  } finally {
    await pool.end();
  }
}

async function submitAgentCommand(args: SubmitAgentArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const url = databaseUrlOf(args.databaseUrl, env, 'submit');
  const pool = await openDatabase(url, 2);
  try {
    const { agent, task, runId, tenant, allowUnknownAgent, maxTurns, requireApproval, decisionTimeoutMs, budget } = args;
    const submitted = await submitRun(pool, { agent, task, runId, tenant, allowUnknownAgent, maxTurns, requireApproval, decisionTimeoutMs, budget, keys: commandLineKeys(env) });
    writers.out(submitted.runId);
    writers.err(
      submitted.created
        ? `[submit] a run of ${agent} queued in ${describeDatabase(url)}; a worker with it takes it up (${cliCommand(env, ['worker', '--agents', 'FILE', ...databaseWords(args.databaseUrl)])}); its result: ${cliCommand(env, ['result', '--run', submitted.runId, '--wait', ...databaseWords(args.databaseUrl)])}`
        : `[submit] the run ${submitted.runId} was queued already with this task: nothing new was queued`,
    );
    return EXIT.done;
  } finally {
    await pool.end();
  }
}

function demoToolNames(pool: Database): string[] {
  return fleetDemoTools(pool, { runId: '', owner: '', epoch: -1 }).map((tool) => tool.name);
}

/** A tool name the demo does not have is refused at submit, not when a worker starts the run. */
function checkedApprovals(pool: Database, rule: string[] | 'side-effects'): string[] | 'side-effects' {
  // Only the tools' names and traits are read: nothing runs.
  checkDecisionPolicy({ requireApproval: rule, allowQuestions: false }, fleetDemoTools(pool, { runId: '', owner: '', epoch: -1 }));
  return rule;
}

/** How often an idle worker looks at the queue, besides being woken by NOTIFY. */
const DEFAULT_POLL_INTERVAL_MS = 500;

const WORKER_WITHOUT_KEY = 'Set it in the environment of every worker; runs submitted without --model use the scripted model and need none.';

export async function workerCommand(args: WorkerArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const url = databaseUrlOf(args.databaseUrl, env, 'worker');
  const webhook = webhookOf(args, env);
  // Before anything is opened: a module that cannot give agents stops the worker here.
  const agents = args.agents === undefined ? [] : await loadAgents(args.agents, process.cwd());
  const traces = await openTraceExport(env, args.traceContent);
  // A webhook delivery holds a connection to LISTEN, and reads and marks its events beside the runs.
  const pool = await openDatabase(url, args.runConcurrency * 3 + 2 + (webhook ? 2 : 0));
  const worker = new Worker({
    webhook,
    ...traceOptions(traces),
    pool,
    agents,
    runConcurrency: args.runConcurrency,
    leaseMs: args.leaseMs ?? DEFAULT_LEASE_MS,
    exitWhenIdle: args.exitWhenIdle,
    pollIntervalMs: args.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    log: (line) => writers.out(line),
    crashAfter: env.CRASH_AFTER || undefined,
    keys: commandLineKeys(env),
    modelFor: (spec) => (spec.model ? realModel(spec.model, env, args.request, WORKER_WITHOUT_KEY) : Promise.resolve(scriptedDemoModel(spec))),
  });
  const onSignal = (signal: string) => () => worker.stop(signal);
  process.once('SIGTERM', onSignal('SIGTERM'));
  process.once('SIGINT', onSignal('SIGINT'));
  try {
    await worker.run();
    return EXIT.done;
  } finally {
    await pool.end().catch(() => {});
    await traces?.shutdown();
  }
}

const WEBHOOK_SECRET_ENV = 'DURABLE_AGENT_WEBHOOK_SECRET';

/** The secret comes from the environment only: on the command line, ps and the shell's history would show it. */
function webhookOf(args: WorkerArgs, env: NodeJS.ProcessEnv): { url: string; secret: string; includeContent: boolean } | undefined {
  if (args.webhookUrl === undefined) return undefined;
  // Never quoted: a URL may hold credentials.
  let protocol: string;
  try {
    protocol = new URL(args.webhookUrl).protocol;
  } catch {
    throw new UsageError('--webhook-url is not a URL: give the http or https address the events are POSTed to, e.g. https://hooks.example.com/durable-agent.');
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new UsageError(`--webhook-url is a ${protocol.replace(/:$/, '')} URL: give an http or https one.`);
  const secret = env[WEBHOOK_SECRET_ENV];
  if (secret === undefined || secret.trim() === '') {
    throw new UsageError(`--webhook-url needs the secret that signs each event: set ${WEBHOOK_SECRET_ENV} in the worker's environment (16 characters at least, e.g. from openssl rand -hex 32), the same one the receiver verifies with. It is never taken from the command line.`);
  }
  if (secret.trim().length < 16) throw new UsageError(`${WEBHOOK_SECRET_ENV} is shorter than 16 characters: give a longer secret (e.g. openssl rand -hex 32), and the receiver the same one.`);
  // Read once: the processes the runs' tools start (MCP servers, commands) do not inherit it.
  if (env === process.env) delete process.env[WEBHOOK_SECRET_ENV];
  return { url: args.webhookUrl, secret, includeContent: args.webhookIncludeContent };
}

/** Runs stopped at a limit are stopped, resumable: counted apart from the finished ones, with the way on. */
function limitWords(runs: readonly FleetRunSummary[]): string {
  const budget = runs.filter((run) => run.state === 'stoppedAtBudget').length;
  const turns = runs.filter((run) => run.state === 'stoppedAtMaxTurns').length;
  const parts = [...(budget ? [`${budget} stopped at their budget`] : []), ...(turns ? [`${turns} stopped at MAX_TURNS`] : [])];
  return parts.length ? `, ${parts.join(', ')} (resumable: raise --run ID gives one more)` : '';
}

/** What the state column adds: a request that waits, or what a run stopped at a limit waits for. */
function stateNote(run: FleetRunSummary): string {
  if (run.fleet.cancelAskedBy !== null) return ` (cancel asked by ${run.fleet.cancelAskedBy})`;
  if (run.pausedBy !== null) return ` (paused by ${run.pausedBy})`;
  if (run.fleet.raise !== null) return ` (raised: ${raiseWords(run.fleet.raise)}; to be taken up)`;
  if (run.fleet.stoppedAtLimit) return ' (stopped, resumable: raise --run ID)';
  // Claimed, its first record not written yet: a worker has it, it no longer waits in the queue.
  if (run.state === ('queued' as string) && run.fleet.leaseActive) return ` (taken by ${run.fleet.worker ?? 'a worker'}, starting)`;
  if (run.fleet.waitsForAgent !== null) return ` (waits for ${run.fleet.waitsForAgent})`;
  if (run.fleet.waitsForRuns.length) return ` (waits for ${awaitedRunsWords(run.fleet.waitsForRuns)})`;
  return '';
}

function pausedWords(paused: number): string {
  return paused ? `, ${paused} paused (unpause --run ID lets the fleet go on with one)` : '';
}

/** Which runs list asks for: only those resting in these states (--state), a page of them (--limit, --after); null: every one. */
export interface FleetListPage {
  states?: readonly AgentStateName[] | null;
  limit?: number | null;
  after?: string | null;
  /** Only the runs of this tenant (list --tenant). */
  tenant?: string | null;
}

export async function fleetStatusCommand(args: StatusArgs, env: NodeJS.ProcessEnv, writers: Writers, page: FleetListPage = {}): Promise<number> {
  const url = databaseUrlOf(args.databaseUrl, env, 'status');
  const pool = await openDatabase(url, 1);
  let runs: FleetRunSummary[];
  try {
    runs = await listRuns(pool, { states: page.states ?? undefined, limit: page.limit ?? undefined, after: page.after ?? undefined, tenant: page.tenant ?? undefined, keys: commandLineKeys(env) });
  } finally {
    await pool.end();
  }
  if (args.json) {
    // The queue's rows, as this command has always printed them.
    writers.out(JSON.stringify(runs.map((run) => withTaskWords(run.fleet)), null, 2));
    return EXIT.done;
  }
  const rows = runs.map((run) => [
    run.runId,
    `${run.state}${stateNote(run)}`,
    String(run.turn),
    String(run.fleet.records),
    run.fleet.leaseActive ? (run.fleet.worker ?? '-') : '-',
    String(run.fleet.leaseEpoch),
    run.fleet.leaseActive ? (run.fleet.leaseExpiresAt ?? '-') : '-',
    run.fleet.awaiting === null ? '-' : `${run.fleet.awaiting} since ${run.fleet.awaitingSince ?? '?'}${run.fleet.decisionGiven ? ' (decided, to be taken up)' : ''}`,
    run.fleet.forkedFrom ? `${run.fleet.forkedFrom.run ?? '?'} at record ${run.fleet.forkedFrom.seq}` : '-',
    run.fleet.agentVersion === null ? run.fleet.agent : `${run.fleet.agent}@${run.fleet.agentVersion}`,
  ]);
  // Whose each run is, once some run is not the default tenant's.
  const tenants = withTenants(runs, rows);
  for (const line of tableLines(['run', 'state', 'turn', 'records', 'worker', 'epoch', 'lease until', 'waits for a person', 'forked from', 'agent', ...(tenants ? ['tenant'] : [])], rows)) writers.out(line);
  const done = runs.filter((run) => run.state === 'done').length;
  const waiting = runs.filter((run) => run.fleet.awaiting !== null).length;
  writers.out(
    `${runs.length} runs: ${done} done, ${runs.filter((r) => !r.fleet.finished).length} unfinished, ${runs.filter((r) => r.fleet.leaseActive).length} leased, ` +
      `${waiting} waiting for a person${waiting ? ' (pending --run ID lists what; approve, deny or answer --run ID decide)' : ''}` +
      pausedWords(runs.filter((run) => run.pausedBy !== null).length) +
      limitWords(runs),
  );
  return EXIT.done;
}

/** A row whose task waits sealed says so, naming its run key: never a sealed string printed as if it were the task. */
function withTaskWords(run: QueuedRun): QueuedRun {
  const spec = run.spec as { task?: unknown };
  if (typeof spec.task !== 'string' || contentWords(spec.task) === spec.task) return run;
  return { ...run, spec: { ...run.spec, task: contentWords(spec.task) } as QueuedRun['spec'] };
}
