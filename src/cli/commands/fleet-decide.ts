/**
 * `pending`, `approve`, `deny` and `answer` for a fleet run (`--run ID`), and `pending` for every
 * run of the fleet (`--database-url` alone): the same checks as for a run in a directory, read
 * from the run's journal in PostgreSQL; the decision goes into da_decisions, where the claim
 * query sees it: the run becomes claimable and a worker applies it.
 */
import { decide, type PendingDecision, pendingDecisions } from '../../awaits/decide.ts';
import { listQueuedRuns } from '../../fleet/run-queue.ts';
import { deciderOf, mayHaveWaitingCalls, treePendingDecisions } from '../../runtime/tree-decisions.ts';
import { fleetDemoTools } from '../../fleet/fleet-demo-tools.ts';
import type { DatabaseRunStore } from '../../store/store.ts';
import { type Database, databaseUrlOf, openDatabase } from '../../store/pg/pool.ts';
import type { DecideArgs, PendingArgs } from '../args.ts';
import { decisionHintLines } from '../../words/decision-lines.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { cliCommand } from '../../words/shell-command.ts';
import { fleetStoreOf } from '../fleet-store.ts';
import { pendingTable } from '../../words/pending-table.ts';
import { decideInputOf, givenLine } from './decide.ts';

export async function fleetPendingCommand(args: PendingArgs, env: NodeJS.ProcessEnv, writers: Writers, now = Date.now()): Promise<number> {
  const runId = args.fleetRun;
  if (runId === null) return withPool(databaseUrlOf(args.databaseUrl, env, 'pending'), (pool) => wholeFleetPending(pool, args, env, writers, now));
  return withPool(databaseUrlOf(args.databaseUrl, env, 'pending --run'), async (pool) => {
    // The run's own calls, then those its sub-agent runs wait on (a decision given here reaches them).
    const waiting = await treePendingDecisions(await fleetStoreOf(pool, runId));
    if (args.json) {
      writers.out(JSON.stringify(waiting.map(({ store: _store, ...call }) => call), null, 2));
      return EXIT.done;
    }
    if (waiting.length === 0) {
      writers.out(`Nothing waits for a decision in fleet run ${runId}.`);
      return EXIT.done;
    }
    for (const line of pendingTable(waiting, now)) writers.out(line);
    const next = waiting.find((call) => !call.given);
    if (next) {
      for (const line of decisionHintLines(fleetDecisionCommands(env, runId), next)) writers.out(line);
      writers.out('  (with --database-url URL, or DURABLE_AGENT_DATABASE_URL set; a worker takes the run up once decided)');
    }
    return EXIT.done;
  });
}

/**
 * The waiting calls of every run of the fleet, each under its own run's id (a sub-agent run's
 * under its own): read from the journals of the runs whose state may hold one.
 */
async function wholeFleetPending(pool: Database, args: PendingArgs, env: NodeJS.ProcessEnv, writers: Writers, now: number): Promise<number> {
  const runs = (await listQueuedRuns(pool, { unfinished: true })).filter((run) => !run.finished && mayHaveWaitingCalls(run.state));
  const waiting: Array<PendingDecision & { run: string }> = [];
  for (const run of runs.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    for (const call of await pendingDecisions(await fleetStoreOf(pool, run.id))) waiting.push({ ...call, run: run.id });
  }
  if (args.json) {
    writers.out(JSON.stringify(waiting, null, 2));
    return EXIT.done;
  }
  if (waiting.length === 0) {
    writers.out('Nothing waits for a decision in the runs of the fleet.');
    return EXIT.done;
  }
  for (const line of pendingTable(waiting, now)) writers.out(line);
  const next = waiting.find((call) => !call.given);
  if (next) {
    for (const line of decisionHintLines(fleetDecisionCommands(env, next.run), next)) writers.out(line);
    writers.out('  (with --database-url URL, or DURABLE_AGENT_DATABASE_URL set; a worker takes the run up once decided)');
  }
  return EXIT.done;
}

/** The commands that decide a call of a fleet run (a worker resumes it: there is no resume command). */
function fleetDecisionCommands(env: NodeJS.ProcessEnv, runId: string) {
  const where = ['--run', runId];
  return { approve: cliCommand(env, ['approve', ...where]), deny: cliCommand(env, ['deny', ...where]), answer: cliCommand(env, ['answer', ...where]), signal: cliCommand(env, ['signal', ...where]), resume: '' };
}

export async function fleetDecideCommand(args: DecideArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  const runId = args.fleetRun!;
  return withPool(databaseUrlOf(args.databaseUrl, env, `${args.command} --run`), async (pool) => {
    const parent = await fleetStoreOf(pool, runId);
    // A call one of its sub-agent runs waits on is decided in that run's inbox.
    const store = await deciderOf(parent, { tool_use_id: args.callId });
    const owner = store === parent ? runId : (store.runId ?? runId);
    const tools = args.input === undefined ? undefined : await toolsOf(pool, store as DatabaseRunStore, owner);
    const name = (await pendingDecisions(store).catch(() => [])).find((call) => call.tool_use_id === args.callId)?.name ?? 'the call';
    const decision = await decide(store, decideInputOf(args), { tools });
    writers.out(givenLine(decision, name));
    writers.out(`The run is claimable now: a worker of the fleet takes it up and applies the decision (fleet run ${owner}${owner === runId ? '' : `, a sub-agent run of ${runId}`}).`);
    return EXIT.done;
  });
}

/** The tools a worker offers the run (only their input schemas are used: to check an edited input). */
async function toolsOf(pool: Database, store: DatabaseRunStore, runId: string) {
  const origin = (await store.load()).header.startedBy;
  return origin?.command === 'worker' ? fleetDemoTools(pool, { runId, owner: 'schema-check', epoch: -1 }) : undefined;
}

async function withPool(url: string, work: (pool: Database) => Promise<number>): Promise<number> {
  const pool = await openDatabase(url, 2);
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}
