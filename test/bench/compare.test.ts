/**
 * bench:compare's pure parts (its arguments, its medians, ratios and table, the parts a tree
 * lacks) and the git worktree it checks REF out into, removed on every way out: a throw, an
 * await that never settles, SIGINT. Nothing here is timed.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CompareUsageError, parseCompareArgs } from '../../bench/compare/args.ts';
import { compareTable, comparedRow, formatRatio, formatValue, median } from '../../bench/compare/report.ts';
import { loadParts } from '../../bench/compare/tree-parts.ts';
import { onExit, pendingCleanups, runCleanups } from '../../bench/exit-cleanup.ts';
import { checkoutTree, UnknownRevisionError } from '../../bench/git-tree.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

describe('bench:compare arguments', () => {
  it('takes the revision, --quick and the benchmarks to run, in their own order', () => {
    expect(parseCompareArgs(['--against', '6d8b3bb'])).toEqual({ against: '6d8b3bb', quick: false, only: ['turn', 'file', 'resume'] });
    expect(parseCompareArgs(['--quick', '--against=main~3', '--only', 'resume,turn'])).toEqual({ against: 'main~3', quick: true, only: ['turn', 'resume'] });
    expect(parseCompareArgs(['--against', 'v1', '--only', 'file', '--only', 'file'])).toEqual({ against: 'v1', quick: false, only: ['file'] });
  });

  it.each([
    [[], '--against REF is required'],
    [['--against'], '--against needs a value'],
    [['--against', '--quick'], '--against needs a value'],
    [['--against', 'a', '--against', 'b'], '--against is given twice'],
    [['--against', 'a', '--only', 'fleet'], '--only fleet: not a benchmark (turn, file, resume)'],
    [['--against', 'a', '--fast'], '--fast: not an option of bench:compare'],
  ])('refuses %j: %s', (argv, problem) => {
    const error = (() => {
      try {
        parseCompareArgs(argv);
      } catch (thrown) {
        return thrown;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(CompareUsageError);
    expect((error as CompareUsageError).problem).toContain(problem);
    expect((error as CompareUsageError).message).toContain('usage: npm run bench:compare -- --against REF');
  });
});

describe('bench:compare figures', () => {
  it('takes medians, the ratio of the medians and the range of the pairs', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    const row = comparedRow({ benchmark: 'turn', name: 'CPU per turn, memory store, T=50', unit: 'ms', ours: [1, 2, 3], ref: [2, 2, 2] });
    expect(row).toMatchObject({ ours: 2, ref: 2, ratio: 1, pairRange: [0.5, 1.5], runs: 3, skipped: null });
    expect(comparedRow({ benchmark: 'file', name: 'fsyncs', unit: '', ours: [0, 0], ref: [0, 0] }).ratio).toBe(1);
    expect(formatRatio(1.234)).toBe('1.23×');
    expect(formatRatio(null)).toBe('–');
    expect([0.1234, 1.234, 12.34, 1234].map((value) => formatValue(value, 'ms'))).toEqual(['0.123 ms', '1.23 ms', '12.3 ms', '1,234 ms']);
    expect(formatValue(2.015, '')).toBe('2.02');
  });

  it('prints a row per benchmark, and a skipped one with its reason', () => {
    const table = compareTable(
      [
        comparedRow({ benchmark: 'turn', name: 'CPU per turn, memory store, T=50', unit: 'ms', ours: [0.05, 0.06], ref: [0.1, 0.1] }),
        comparedRow({ benchmark: 'resume', name: 'resume of a finished run', skipped: 'REF abc1234 has no bench/workload.ts' }),
      ],
      { ours: 'this tree (def5678)', ref: 'REF abc1234' },
    );
    expect(table.split('\n')).toEqual([
      'benchmark                         this tree (def5678)  REF abc1234  this ÷ REF  pairs (min–max)  runs',
      'CPU per turn, memory store, T=50             0.055 ms     0.100 ms       0.55×      0.50×–0.60×     2',
      'resume of a finished run          skipped: REF abc1234 has no bench/workload.ts',
    ]);
  });

  it('says which part a tree lacks, for its benchmark to be skipped', async () => {
    const tree = tempDir();
    expect(await loadParts(tree, 'REF abc1234', 'turn')).toEqual({ ok: false, missing: 'REF abc1234 has no bench/workload.ts' });
    fs.mkdirSync(path.join(tree, 'bench'));
    fs.writeFileSync(path.join(tree, 'bench', 'workload.ts'), 'export const benchScript = () => [];\n');
    expect(await loadParts(tree, 'REF abc1234', 'turn')).toEqual({ ok: false, missing: "REF abc1234's bench/workload.ts exports no benchRunOptions" });
    const ours = await loadParts(REPO, 'this tree', 'resume');
    expect(ours.ok).toBe(true);
  });
});

describe('cleanups on the way out', () => {
  it('runs each once, the last registered first; one that fails does not stop the others', () => {
    const ran: string[] = [];
    const first = onExit('first', () => ran.push('first'));
    onExit('failing', () => {
      throw new Error('no');
    });
    onExit('last', () => ran.push('last'));
    first();
    first();
    expect(pendingCleanups()).toEqual(['failing', 'last']);
    runCleanups();
    expect(ran).toEqual(['first', 'last']);
    expect(pendingCleanups()).toEqual([]);
  });
});

function worktrees(): string {
  return execFileSync('git', ['-C', REPO, 'worktree', 'list', '--porcelain'], { encoding: 'utf8' });
}

/** Runs the holder fixture; resolves with the worktree it made and how it ended. */
function holder(how: 'throw' | 'hang' | 'wait'): Promise<{ dir: string; code: number | null; sawTree: boolean }> {
  const fixture = path.join(REPO, 'test', 'fixtures', 'bench-tree-holder.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, how], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let sawTree = false;
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (!sawTree && out.includes('\n')) {
      sawTree = fs.existsSync(out.trim()) && worktrees().includes(out.trim());
      if (how === 'wait') child.kill('SIGINT');
    }
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ dir: out.trim(), code, sawTree })));
}

describe('the worktree of another commit', () => {
  it.each([
    ['throw', 1],
    ['hang', 13],
    ['wait', 130],
  ] as const)('is removed when the bench holding it ends by %s', async (how, exitCode) => {
    const { dir, code, sawTree } = await holder(how);
    expect(sawTree).toBe(true);
    expect(code).toBe(exitCode);
    expect(fs.existsSync(dir)).toBe(false);
    expect(worktrees()).not.toContain(dir);
  });

  it('is refused, and nothing made, for a revision that names no commit', () => {
    const before = worktrees();
    expect(() => checkoutTree(REPO, 'no-such-revision-here')).toThrow(UnknownRevisionError);
    expect(() => checkoutTree(REPO, 'no-such-revision-here')).toThrow('no-such-revision-here names no commit of');
    expect(worktrees()).toBe(before);
  });
});
