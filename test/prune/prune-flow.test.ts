/**
 * One prune flow over any source of finished runs: the rule picks among what the source offers,
 * newest first; each pick is removed, skipped (taken up meanwhile) or failed, as the source says.
 */
import { describe, expect, it } from 'vitest';
import { pruneFrom, type PruneSource } from '../../src/prune/prune-flow.ts';
import { PruneRuleMissingError } from '../../src/prune/prune-plan.ts';

const DAY = 86_400_000;
const NOW = 100 * DAY;
const runs = [
  { id: 'a', state: 'done', finishedAt: NOW - 1 * DAY, bytes: 10 },
  { id: 'b', state: 'done', finishedAt: NOW - 5 * DAY, bytes: 20 },
  { id: 'c', state: 'failed', finishedAt: NOW - 9 * DAY, bytes: 40 },
];

function source(outcomes: Record<string, 'removed' | 'skipped' | string>): PruneSource<(typeof runs)[number], string> & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    candidates: async () => ({ candidates: runs, now: NOW }),
    async remove(run) {
      asked.push(run.id);
      const outcome = outcomes[run.id] ?? 'removed';
      return outcome === 'removed' || outcome === 'skipped' ? outcome : { failed: outcome };
    },
  };
}

describe('one prune over any source', () => {
  it('removes what the rule picks, newest first, and counts only what went', async () => {
    const from = source({ b: 'skipped', c: 'disk full' });
    const outcome = await pruneFrom(from, { keep: 0, olderThanMs: 2 * DAY });
    expect(from.asked).toEqual(['b', 'c']);
    expect(outcome).toEqual({ dryRun: false, removed: [], totalBytes: 0, skipped: [runs[1]], failed: ['disk full'] });
  });

  it('with dryRun asks nothing of the source and lists what would go', async () => {
    const from = source({});
    const outcome = await pruneFrom(from, { keep: 1, dryRun: true });
    expect(from.asked).toEqual([]);
    expect(outcome.removed.map((run) => run.id)).toEqual(['b', 'c']);
    expect(outcome.totalBytes).toBe(60);
  });

  it('refuses a prune without a rule before reading the source', async () => {
    const from = { candidates: () => Promise.reject(new Error('read')), remove: () => Promise.reject(new Error('remove')) };
    await expect(pruneFrom(from, {})).rejects.toThrow(PruneRuleMissingError);
  });
});
