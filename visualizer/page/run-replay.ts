/**
 * Time travel over a run's steps: the context as it stood at one step, rebuilt from what the
 * steps carry. Pure, so the page and the tests use the same code.
 */
import type { LedgerEntryView, MessageView, RunView } from '../viz-data.ts';

/** Indexes into run.messages of the messages as of step `index`. */
export function messageIdsAt(run: RunView, index: number): number[] {
  const ids: number[] = [];
  for (const step of run.steps.slice(0, index + 1)) {
    if (!step.messageEdit) continue;
    ids.length = step.messageEdit.from;
    ids.push(...step.messageEdit.add);
  }
  return ids;
}

export function messagesAt(run: RunView, index: number): MessageView[] {
  return messageIdsAt(run, index).map((id) => run.messages[id]!);
}

export function ledgerAt(run: RunView, index: number): LedgerEntryView[] {
  const step = run.steps[index];
  return step ? run.ledger.slice(0, step.ledgerSize) : [];
}
