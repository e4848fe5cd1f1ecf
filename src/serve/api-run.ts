/**
 * A run as the HTTP API answers it (ApiRun of src/client/api-types.ts): the summary every list
 * of runs shows, without the server's paths, with how it ended (its result, or why it failed or
 * stopped), read from its journal's last part once it has ended.
 */
import type { AgentContext, AgentStateName } from '../../machines/agent-loop.types.ts';
import { budgetReachedWords } from '../budget/budget-words.ts';
import type { ApiRun } from '../client/api-types.ts';
import type { RunSummary } from '../runtime/run-summary.ts';
import { foldJournal } from '../store/journal/fold-journal.ts';
import type { RunStore } from '../store/store.ts';
import { contentWords } from '../words/sealed-words.ts';

export interface RunEnding {
  result: string | null;
  problem: string | null;
}

const NO_ENDING: RunEnding = { result: null, problem: null };
const ENDED = new Set(['done', 'failed', 'cancelled', 'stopped']);

export function apiRunOf(summary: RunSummary, ending: RunEnding = NO_ENDING): ApiRun {
  return {
    runId: summary.runId,
    source: summary.source,
    state: summary.state,
    category: summary.category,
    // A sealed text read without the keys is never handed out as if it were the text.
    task: contentWords(summary.task),
    turn: summary.turn,
    maxTurns: summary.maxTurns,
    tokens: summary.tokens,
    costUsd: summary.costUsd,
    updatedAt: summary.updatedAt,
    waitsFor: summary.waitsFor,
    waitingOn: summary.waitingOn ? { ...summary.waitingOn } : null,
    agent: summary.agent ? { name: summary.agent.name, version: summary.agent.version } : null,
    pausedBy: summary.pausedBy,
    tenant: summary.tenant,
    result: ending.result === null ? null : contentWords(ending.result),
    // An unreadable run's problem is why it cannot be read.
    problem: ending.problem ?? (summary.category === 'unreadable' ? summary.problem : null),
  };
}

/** How the run ended, read from its final record (only for a run whose summary says it ended). */
export async function endingOf(summary: RunSummary, store: RunStore): Promise<RunEnding> {
  if (!ENDED.has(summary.category)) return NO_ENDING;
  try {
    const view = foldJournal(store.location, await store.load({ fromLastSnapshot: true, finalRecord: true }));
    return endingOfState(view.state, view.context);
  } catch {
    // Read between a prune and the answer, say: the summary stands without it.
    return NO_ENDING;
  }
}

/** The result of a run done, or why it failed, was cancelled or stopped, in words. */
export function endingOfState(state: AgentStateName, context: Pick<AgentContext, 'finalText' | 'failure' | 'cancellation' | 'maxTurns' | 'budgetStop'>): RunEnding {
  switch (state) {
    case 'done':
      return { result: context.finalText ?? '', problem: null };
    case 'failed':
      return { result: null, problem: context.failure?.message ?? 'it failed' };
    case 'cancelled': {
      const by = context.cancellation;
      return { result: null, problem: by ? `cancelled by ${by.by}${by.reason ? `: ${by.reason}` : ''}` : 'cancelled' };
    }
    case 'stoppedAtMaxTurns':
      return { result: null, problem: `stopped at its MAX_TURNS (${context.maxTurns}): raise it to go on` };
    case 'stoppedAtBudget':
      return { result: null, problem: context.budgetStop ? budgetReachedWords(context.budgetStop) : 'stopped at its budget' };
    default:
      return NO_ENDING;
  }
}
