/**
 * The fleet's rows: every run of da_runs as the fleet's list reads it, with its tokens and cost
 * beside it, read from each run's latest record that carries its usage (run-usage.ts).
 */
import type { QueuedRun } from '../fleet/run-queue.ts';
import { awaitedRunsWords } from '../words/tree-lines.ts';
import type { AgentStateName, TokenUsage } from '../../machines/agent-loop.types.ts';
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import { DEMO_TASK } from '../demo/demo-task.ts';
import { estimateCost } from '../model/prices.ts';
import type { Database } from '../store/pg/pool.ts';
import { readLatestUsage } from '../store/pg/run-usage.ts';
import { storedUsage } from '../store/journal/record-shape.ts';
import { categoryOf, type ConsoleRow, FLEET_KEY, KEY_SEPARATOR } from './console-row.ts';

export async function fleetRows(pool: Database): Promise<ConsoleRow[]> {
  const { listRuns } = await import('../fleet/run-queue.ts');
  const [runs, usage] = await Promise.all([listRuns(pool), usageOf(pool)]);
  return runs.map((run) => {
    const spent = usage.get(run.id);
    return {
      key: [FLEET_KEY, run.id].join(KEY_SEPARATOR),
      source: 'fleet',
      runId: run.id,
      state: run.state,
      category: categoryOf(run.state as AgentStateName, run.pausedBy !== null),
      task: run.spec.kind === 'agent' ? run.spec.task : DEMO_TASK,
      turn: run.turn,
      tokens: spent ? totalTokens(spent.usage) : null,
      costUsd: spent ? (spent.costUsd ?? (spent.model ? estimateCost(spent.model, spent.usage) : null)) : null,
      updatedAt: Date.parse(run.updatedAt),
      archived: false,
      problem: null,
      location: 'the fleet (PostgreSQL)',
      // A run that waits for its children waits in awaitingDecision too: the runs say more than the call.
      waitsFor: (run.waitsForRuns.length ? awaitedRunsWords(run.waitsForRuns) : null) ?? awaitedWords(run) ?? run.waitsForAgent,
      pausedBy: run.pausedBy,
      worker: run.leaseActive ? run.worker : null,
      leaseEpoch: run.leaseEpoch,
    };
  });
}

interface Spent {
  usage: TokenUsage;
  /** Counted under a cost budget; null: estimate it from the model's price. */
  costUsd: number | null;
  model: string | null;
}

async function usageOf(pool: Database): Promise<Map<string, Spent>> {
  const rows = await readLatestUsage(pool);
  return new Map(rows.map((row) => [row.id, { usage: storedUsage(row.usage), costUsd: typeof row.cost_usd === 'number' ? row.cost_usd : null, model: row.model }]));
}

/** The call the run waits on, and for a wait its event or its time (what da_waits knows of it). */
function awaitedWords(run: QueuedRun): string | null {
  if (run.awaiting === null) return null;
  const wake = run.awaitingWake;
  if (!wake) return run.awaiting;
  const until = wake.wakeAt ? `until ${wake.wakeAt}` : null;
  return `${run.awaiting} wait: ${wake.event ? `event ${wake.event}${until ? ` (${until} at the latest)` : ''}` : (until ?? 'its time')}`;
}
