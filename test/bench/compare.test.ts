/**
 * bench:compare's pure parts (its arguments, its medians, ratios, report and table, the docs'
 * table it rewrites, the parts a tree lacks) and the git worktree it checks REF out into, removed
 * on every way out: a throw, an await that never settles, SIGINT. Nothing here is timed.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CompareUsageError, parseCompareArgs } from '../../bench/compare/args.ts';
import { DocsRegionError, docsTablePages, REGION_END, REGION_START, rewriteRegion, writeDocsTables } from '../../bench/compare/docs-table.ts';
import { fleetDatabases } from '../../bench/compare/fleet.ts';
import { type CompareRun, compareReport, compareTable, comparedRow, formatRatio, formatValue, median } from '../../bench/compare/report.ts';
import { loadParts } from '../../bench/compare/tree-parts.ts';
import { onExit, pendingCleanups, runCleanups } from '../../bench/exit-cleanup.ts';
import { checkoutTree, UnknownRevisionError } from '../../bench/git-tree.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

describe('bench:compare arguments', () => {
  it('takes the revision, --quick and the benchmarks to run, in their own order', () => {
    expect(parseCompareArgs(['--against', '6d8b3bb'])).toEqual({ against: '6d8b3bb', quick: false, only: ['turn', 'file', 'resume', 'fleet'], writeDocs: false });
    expect(parseCompareArgs(['--quick', '--against=main~3', '--only', 'fleet,resume,turn'])).toEqual({ against: 'main~3', quick: true, only: ['turn', 'resume', 'fleet'], writeDocs: false });
    expect(parseCompareArgs(['--against', 'v1', '--only', 'file', '--only', 'file'])).toEqual({ against: 'v1', quick: false, only: ['file'], writeDocs: false });
  });

  it('writes the docs\' table only from a run of every benchmark', () => {
    expect(parseCompareArgs(['--against', 'v1', '--write-docs'])).toMatchObject({ only: ['turn', 'file', 'resume', 'fleet'], writeDocs: true });
    expect(parseCompareArgs(['--against', 'v1', '--write-docs', '--only', 'turn,file,resume,fleet'])).toMatchObject({ writeDocs: true });
  });

  it.each([
    [[], '--against REF is required'],
    [['--against'], '--against needs a value'],
    [['--against', '--quick'], '--against needs a value'],
    [['--against', 'a', '--against', 'b'], '--against is given twice'],
    [['--against', 'a', '--only', 'flood'], '--only flood: not a benchmark (turn, file, resume, fleet)'],
    [['--against', 'a', '--only', 'turn', '--write-docs'], '--write-docs writes the table of every benchmark: give it without --only'],
    [['--against', 'a', '--write-docs=yes'], '--write-docs takes no value'],
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

const RUN: CompareRun = {
  date: '2026-12-07T04:30:12.345Z',
  plan: 'full',
  ours: 'def5678',
  ref: { given: 'main~3', commit: 'abc1234' },
  node: 'v20.20.2',
  cores: 2,
  seconds: 412.4,
  load: { start: 1.04, end: 2.36 },
  rows: [
    comparedRow({ benchmark: 'turn', name: 'CPU per turn, memory store, T=50', unit: 'ms', ours: [0.05, 0.06], ref: [0.1, 0.1] }),
    comparedRow({ benchmark: 'fleet', name: 'fleet of 2 workers, records per worker CPU second', unit: 'records/CPU s', ours: [9000, 11000], ref: [5000, 5000] }),
  ],
};

const REPORT = [
  'durable-agent bench:compare (full): this tree (def5678) against REF main~3 (abc1234); 2026-12-07 04:30 UTC; node v20.20.2, 2 cores; 412 s; load average 1.0 at the start, 2.4 at the end',
  'Medians; the trees take turns every repetition (the order swapped each time); in-process runs after an untimed warm-up of each tree, resumes each in a fresh process,',
  'fleets each on a fresh database of their own, workers warmed up first.',
  'this ÷ REF below 1: this tree takes less (but records per CPU second: above 1, this tree does more with the CPU). pairs: the ratio within one repetition, lowest and highest.',
  '',
  'benchmark                                           this tree (def5678)          REF abc1234  this ÷ REF  pairs (min–max)  runs',
  'CPU per turn, memory store, T=50                               0.055 ms             0.100 ms       0.55×      0.50×–0.60×     2',
  'fleet of 2 workers, records per worker CPU second  10,000 records/CPU s  5,000 records/CPU s       2.00×      1.80×–2.20×     2',
];

const PAGE = [
  '# Performance',
  '',
  'Prose that reads the figures, written by hand.',
  '',
  REGION_START,
  '```text',
  'the figures of an older run',
  '```',
  REGION_END,
  '',
  'More prose after the table.',
  '',
].join('\n');

describe('bench:compare report and the docs\' table', () => {
  it('says what ran where and when, with the load, then the table', () => {
    expect(compareReport(RUN).split('\n')).toEqual(REPORT);
  });

  it('replaces what stands between the markers with the report, and nothing else', () => {
    const page = rewriteRegion('docs/performance.md', PAGE, compareReport(RUN));
    expect(page).toBe(PAGE.replace('```text\nthe figures of an older run\n```', ['```text', ...REPORT, '```'].join('\n')));
    expect(page.startsWith(`# Performance\n\nProse that reads the figures, written by hand.\n\n${REGION_START}\n\`\`\`text\n`)).toBe(true);
    expect(page.endsWith(`\n\`\`\`\n${REGION_END}\n\nMore prose after the table.\n`)).toBe(true);
    // A second run rewrites the same region in place.
    expect(rewriteRegion('docs/performance.md', page, compareReport(RUN))).toBe(page);
  });

  it.each([
    ['no markers', 'just prose\n', 'found 0 start and 0 end marker(s)'],
    ['two regions', `${PAGE}${PAGE}`, 'found 2 start and 2 end marker(s)'],
    ['the end first', `${REGION_END}\n${REGION_START}\n`, 'the end marker comes before the start marker'],
  ])('refuses a page with %s', (_case, text, problem) => {
    expect(() => rewriteRegion('docs/performance.md', text, 'figures')).toThrow(DocsRegionError);
    expect(() => rewriteRegion('docs/performance.md', text, 'figures')).toThrow(`docs/performance.md: ${problem}`);
  });

  it('writes into each page that has the region, the others left as they were', () => {
    const repo = tempDir();
    fs.mkdirSync(path.join(repo, 'docs'));
    fs.writeFileSync(path.join(repo, 'docs', 'performance.md'), PAGE);
    fs.writeFileSync(path.join(repo, 'README.md'), '# durable-agent\n\nNo figures here.\n');
    expect(writeDocsTables(repo, 'the new figures')).toEqual(['docs/performance.md']);
    expect(fs.readFileSync(path.join(repo, 'docs', 'performance.md'), 'utf8')).toBe(PAGE.replace('the figures of an older run', 'the new figures'));
    expect(fs.readFileSync(path.join(repo, 'README.md'), 'utf8')).toBe('# durable-agent\n\nNo figures here.\n');
    expect(fs.readdirSync(path.join(repo, 'docs'))).toEqual(['performance.md']);
  });

  it('refuses before writing anything when a page with the region has its markers wrong, or no page has it', () => {
    const repo = tempDir();
    fs.mkdirSync(path.join(repo, 'docs'));
    fs.writeFileSync(path.join(repo, 'docs', 'performance.md'), PAGE);
    fs.writeFileSync(path.join(repo, 'README.md'), `${REGION_START}\n`);
    expect(() => docsTablePages(repo)).toThrow('README.md: found 1 start and 0 end marker(s)');
    expect(() => writeDocsTables(repo, 'the new figures')).toThrow(DocsRegionError);
    expect(fs.readFileSync(path.join(repo, 'docs', 'performance.md'), 'utf8')).toBe(PAGE);
    expect(() => docsTablePages(tempDir())).toThrow("docs/performance.md or README.md: no page has the table's region");
  });

  it('finds the region on the real performance page, once, and none in the README (it has no figures)', () => {
    expect(docsTablePages(REPO)).toEqual(['docs/performance.md']);
  });
});

describe('bench:compare fleet', () => {
  it('is skipped, said why, against a commit that cannot run a user\'s agent in a fleet', async () => {
    const old = tempDir();
    const found = await fleetDatabases([
      { name: 'ours', repo: REPO, commit: 'def5678' },
      { name: 'baseline', repo: old, commit: 'abc1234' },
    ]);
    expect(found).toEqual({ missing: "baseline (abc1234) has no src/store/pg/pool.ts: it cannot run a user's agent in a fleet" });
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
