/**
 * How a run that came to rest ended, where a live run's page shows its records as they come: the
 * final answer of a done run, the failure, who cancelled it and why, or the limit it stopped at.
 */
import type { RunDetail } from '../run-detail.ts';
import { el } from './dom.ts';
import { usd } from './format.ts';

/** The states a run rests in with an outcome to show (a stopped run may go on when resumed with more). */
const RESTING = ['done', 'failed', 'cancelled', 'stoppedAtMaxTurns', 'stoppedAtBudget'];

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** Where a larger limit is given: a fleet's run is raised, a folder's resumed. */
function raiseWords(data: RunDetail): string {
  return data.source === 'fleet' ? 'durable-agent raise --run ID, and a worker takes it up' : 'demo --resume or run --resume';
}

export function hasOutcome(data: RunDetail): boolean {
  return data.summary !== null && RESTING.includes(data.summary.state);
}

/** The outcome's heading and words; the final answer whole, as text. */
export function renderOutcome(box: HTMLElement, data: RunDetail): void {
  const s = data.summary!;
  box.appendChild(el('h2', null, ['Outcome ', el('span', { class: 'cat', 'data-state': s.state, text: s.state })]));
  const lines: Array<[string, string]> = [];
  switch (s.state) {
    case 'done':
      lines.push(['the answer', s.finalText ?? '(the model gave no text)']);
      break;
    case 'failed':
      lines.push(['failure', s.failure ?? 'no reason was recorded']);
      break;
    case 'cancelled': {
      const cancelled = data.status?.cancellation;
      lines.push(['cancelled', cancelled ? `by ${cancelled.by}${cancelled.reason ? `: ${cancelled.reason}` : ' (no reason given)'}` : 'cancelled']);
      break;
    }
    case 'stoppedAtMaxTurns':
      lines.push(['stopped', `at its limit of ${count(s.maxTurns, 'turn')}: it goes on when resumed with a larger --max-turns (${raiseWords(data)})`]);
      break;
    default: {
      const stop = data.status?.budgetStop;
      const figures = stop ? (stop.budget === 'cost' ? `${usd(stop.spent)} of ${usd(stop.limit)}` : `${stop.spent} of ${stop.limit} tokens`) : 'its budget';
      lines.push(['stopped', `at its budget, ${figures}: it goes on when resumed with a larger one (${raiseWords(data)})`]);
    }
  }
  lines.push(['spent', `${count(s.turn, 'turn')}, ${count(s.tokens, 'token')}, ${usd(s.costUsd)}`]);
  const list = el('dl', { id: 'outcome', class: `outcome outcome-${s.state}` });
  for (const [name, value] of lines) {
    list.appendChild(el('dt', { text: name }));
    list.appendChild(el('dd', { text: value }));
  }
  box.appendChild(list);
}
