/** The paired measurement the sealing benchmarks print: the order alternates, and each ratio is taken within its pair. */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pairedRatios, pairedRounds, quantile } from '../../bench/paired-rounds.ts';
import { REPO } from '../helpers/cli.ts';

describe('paired rounds', () => {
  it('alternates which variant runs first, so a drift favours neither', async () => {
    const order: string[] = [];
    const pairs = await pairedRounds(4, async (variant, round) => {
      order.push(`${variant ? 'B' : 'A'}${round}`);
      return { wallMs: round + 1, cpuMs: 1 };
    });
    expect(order).toEqual(['A0', 'B0', 'B1', 'A1', 'A2', 'B2', 'B3', 'A3']);
    expect(pairs.base.map((cost) => cost.wallMs)).toEqual([1, 2, 3, 4]);
  });

  it('takes each ratio within its pair, then their median, quartiles and the interval of the median', () => {
    // The base moves tenfold between rounds; the variant is 1.1x its own round's base.
    const base = [1, 10, 2, 20, 3, 30, 4, 40, 5, 50];
    const summary = pairedRatios(
      base,
      base.map((value) => value * 1.1),
    );
    expect(summary.median).toBeCloseTo(1.1);
    expect(summary.q1).toBeCloseTo(1.1);
    expect(summary.q3).toBeCloseTo(1.1);
    expect(summary.low).toBeCloseTo(1.1);
    expect(summary.high).toBeCloseTo(1.1);
  });

  it('brackets the median by order statistics', () => {
    const ratios = Array.from({ length: 30 }, (_, i) => 1 + i / 100);
    const summary = pairedRatios(
      ratios.map(() => 1),
      ratios,
    );
    expect(summary.median).toBeCloseTo(1.145);
    expect(summary.low).toBeCloseTo(1.09);
    expect(summary.high).toBeCloseTo(1.2);
    expect(quantile([4, 1, 3, 2], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4, 5], 0.25)).toBe(2);
  });
});

it('the file store benchmark prints plain and sealed per turn with the paired ratio and its spread (tiny counts: the figures are not judged)', () => {
  const script = fileURLToPath(new URL('../../bench/seal-file-store.ts', import.meta.url));
  const out = execFileSync(process.execPath, ['--import', 'tsx', script, '--turns', '2', '--rounds', '3'], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
  expect(out).toContain('3 pairs of runs, plain and sealed in turn');
  for (const what of ['wall', 'cpu']) {
    expect(out).toMatch(new RegExp(`${what} +plain \\d+\\.\\d+ ms, sealed \\d+\\.\\d+ ms per turn; paired ratio: median \\d+\\.\\d+x \\(95% .*\\), interquartile .*x`));
  }
}, 180_000);
