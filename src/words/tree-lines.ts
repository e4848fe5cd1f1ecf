/** A run's tree of sub-agent runs in words: status names the children, list indents them. Pure. */
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import type { TokenUsage } from '../../machines/agent-loop.types.ts';
import type { ChildRunStatus } from '../runtime/run-status.ts';
import type { CalledBy } from '../store/journal/journal-record.ts';

/** One line per child run, depth first, indented by depth: "toolu_a → run P.toolu_a: done (turn 2, 1,234 tokens)". */
export function childRunLines(children: readonly ChildRunStatus[], depth = 0): string[] {
  return children.flatMap((child) => [
    `${'  '.repeat(depth)}${child.toolUseId} → run ${child.runId}: ${child.state} (turn ${child.turn}, ${totalTokens(child.usage).toLocaleString('en-US')} tokens)`,
    ...childRunLines(child.children, depth + 1),
  ]);
}

export function calledByWords(calledBy: CalledBy): string {
  return `run ${calledBy.runId}, call ${calledBy.toolUseId} (this run is one of its sub-agents)`;
}

/** "of which 1,234 charged for its sub-agent runs (its own model: 567)". */
export function chargedWords(usage: TokenUsage, charged: TokenUsage): string {
  const all = totalTokens(usage);
  const theirs = totalTokens(charged);
  return `${theirs.toLocaleString('en-US')} of its ${all.toLocaleString('en-US')} tokens were its sub-agent runs' (charged as their turns closed); its own model's: ${(all - theirs).toLocaleString('en-US')}`;
}

/** Rows in tree order: each run then the runs it called, the called ones indented under it. */
export function treeOrder<T>(rows: readonly T[], idOf: (row: T) => string, parentOf: (row: T) => string | null): Array<{ row: T; depth: number }> {
  const ids = new Set(rows.map(idOf));
  const under = new Map<string, T[]>();
  const tops: T[] = [];
  for (const row of rows) {
    const parent = parentOf(row);
    if (parent !== null && ids.has(parent) && parent !== idOf(row)) under.set(parent, [...(under.get(parent) ?? []), row]);
    else tops.push(row);
  }
  const ordered: Array<{ row: T; depth: number }> = [];
  const seen = new Set<T>();
  const visit = (row: T, depth: number) => {
    if (seen.has(row)) return;
    seen.add(row);
    ordered.push({ row, depth });
    for (const child of under.get(idOf(row)) ?? []) visit(child, depth + 1);
  };
  for (const row of tops) visit(row, 0);
  // A loop of ids (no run at its top) is listed all the same.
  for (const row of rows) visit(row, 0);
  return ordered;
}
