/**
 * bench:pg's arguments and report, apart from any measuring: what it parses, refuses and prints
 * for given figures. No timing is judged here.
 */
import { describe, expect, it } from 'vitest';
import { FULL_PG_BENCH, parsePgBenchArgs, PgBenchUsageError, QUICK_PG_BENCH } from '../../bench/pg/args.ts';
import { figuresOf, type PgBenchReport, pgReportLines, ratiosOf } from '../../bench/pg/report.ts';

describe('bench:pg arguments', () => {
  it('defaults to the full plan with DBOS; --quick, --turns, --rounds and --no-dbos change it', () => {
    expect(parsePgBenchArgs([])).toEqual({ ...FULL_PG_BENCH, dbos: true });
    expect(parsePgBenchArgs(['--quick'])).toEqual({ ...QUICK_PG_BENCH, dbos: true });
    expect(parsePgBenchArgs(['--quick', '--turns', '7', '--rounds=3', '--no-dbos'])).toEqual({ turns: 7, rounds: 3, dbos: false });
  });

  it.each([
    [['--turns'], '--turns needs a value'],
    [['--turns', '0'], '--turns 0: a whole number of at least 1'],
    [['--rounds', '2.5'], '--rounds 2.5: a whole number of at least 1'],
    [['--quick=yes'], '--quick takes no value'],
    [['--dbos'], '--dbos: not an option of bench:pg'],
  ])('refuses %j, saying why and how to call it', (argv, problem) => {
    const error = (() => {
      try {
        parsePgBenchArgs(argv);
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(PgBenchUsageError);
    expect((error as PgBenchUsageError).problem).toBe(problem);
    expect((error as Error).message).toContain('usage: npm run bench:pg');
  });
});

describe('bench:pg report', () => {
  const turns = 10;
  const report: PgBenchReport = {
    setting: 'bench:pg: PostgreSQL 15',
    turns,
    recordsPerTurn: 4.2,
    commitsPerTurn: 4.1,
    durablePointsPerTurn: 2.05,
    bytesPerTurn: 3022,
    figures: [
      figuresOf('floor', [{ ms: 80, cpuMs: 8, statements: 41, walBytes: 26_000 }, { ms: 100, cpuMs: 10, statements: 41, walBytes: 26_000 }, { ms: 90, cpuMs: 9, statements: 41, walBytes: 26_000 }], turns),
      figuresOf('floorCommits', [{ ms: 120, cpuMs: 12, statements: 41, walBytes: 27_000 }], turns),
      figuresOf('ours', [{ ms: 150, cpuMs: 15, statements: 44, walBytes: 36_000 }], turns),
      figuresOf('dbos', [{ ms: 450, cpuMs: 45, statements: 78, walBytes: 22_000 }], turns),
      figuresOf('dbosPoints', [{ ms: 600, cpuMs: 60, statements: 120, walBytes: 30_000 }], turns),
    ],
    dbosSkipped: null,
    oursByStatement: { 'WITH moved AS': 4.1 },
  };

  it('takes the median of the rounds, per turn', () => {
    expect(report.figures[0]).toEqual({ contender: 'floor', ms: 9, cpuMs: 0.9, statements: 4.1, walBytes: 2600, rounds: 3 });
    expect(figuresOf('ours', [{ ms: 10, cpuMs: 1, statements: 1, walBytes: 1 }, { ms: 30, cpuMs: 3, statements: 3, walBytes: 3 }], 1).ms).toBe(20);
  });

  it('prints each contender, the ratios and whether each target is met', () => {
    expect(ratiosOf(report.figures)).toEqual({ oursOverFloor: 15 / 9, dbosOverOurs: 3, dbosPointsOverOurs: 4, walOverFloor: 3600 / 2600, statementsOverFloor: 4.4 / 4.1, oursOverFloorCommits: 15 / 12 });
    const lines = pgReportLines(report);
    expect(lines).toContain('floor: INSERT + COMMIT       9.000               0.900             4.10            2600       3');
    expect(lines).toContain('ours: PgRunStore            15.000               1.500             4.40            3600       1');
    expect(lines).toContain('Target: our turn ≤ 2× the floor\'s: met (1.67×)');
    expect(lines).toContain("Target: DBOS's turn (a step a turn) ≥ 2.5× ours: met (3.00×)");
    expect(lines).toContain('DBOS with a step for each of our durable points ÷ ours: 4.00× (shown, not judged)');
    expect(lines).toContain('ours ÷ the floor with our commits: 1.25× the time (shown, not judged)');
    expect(lines.join('\n')).toContain('4.10× WITH moved AS');
  });

  it('says why DBOS was not measured, and judges no target of it', () => {
    const without = { ...report, figures: report.figures.slice(0, 3), dbosSkipped: 'npm install @dbos-inc/dbos-sdk failed (E404)' };
    const lines = pgReportLines(without);
    expect(lines).toContain('DBOS Transact             not measured: npm install @dbos-inc/dbos-sdk failed (E404)');
    expect(lines.some((line) => line.includes('DBOS') && !line.includes('not measured') && !line.includes('DBOS checkpoints'))).toBe(false);
    expect(ratiosOf(without.figures).dbosOverOurs).toBeNull();
  });
});
