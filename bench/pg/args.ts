/**
 * The arguments of `npm run bench:pg -- [--quick] [--turns N] [--rounds N] [--no-dbos]`: parsed
 * into data, never printed nor exited on (pg-bench.ts does that).
 */

export interface PgBenchArgs {
  /** Tool-using turns of each run (bench/workload.ts). */
  turns: number;
  /** Measured rounds, each running every contender once, in a rotating order. */
  rounds: number;
  /** Whether DBOS Transact is installed (outside the repository) and measured. */
  dbos: boolean;
}

export const PG_BENCH_USAGE = 'usage: npm run bench:pg -- [--quick] [--turns N] [--rounds N] [--no-dbos]';
export const FULL_PG_BENCH: Omit<PgBenchArgs, 'dbos'> = { turns: 50, rounds: 5 };
export const QUICK_PG_BENCH: Omit<PgBenchArgs, 'dbos'> = { turns: 20, rounds: 2 };

export class PgBenchUsageError extends Error {
  override readonly name = 'PgBenchUsageError';
  constructor(readonly problem: string) {
    super(`${problem}\n${PG_BENCH_USAGE}`);
  }
}

function count(flag: string, given: string): number {
  const n = Number(given);
  if (!/^[0-9]+$/.test(given) || !Number.isSafeInteger(n) || n < 1) throw new PgBenchUsageError(`${flag} ${given}: a whole number of at least 1`);
  return n;
}

export function parsePgBenchArgs(argv: readonly string[]): PgBenchArgs {
  let quick = false;
  let turns: number | undefined;
  let rounds: number | undefined;
  let dbos = true;
  for (let at = 0; at < argv.length; at++) {
    const word = argv[at]!;
    const [flag, inline] = word.startsWith('--') && word.includes('=') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined];
    const value = () => {
      const given = inline ?? argv[++at];
      if (given === undefined || given === '' || given.startsWith('--')) throw new PgBenchUsageError(`${flag} needs a value`);
      return given;
    };
    const noValue = () => {
      if (inline !== undefined) throw new PgBenchUsageError(`${flag} takes no value`);
    };
    switch (flag) {
      case '--quick':
        noValue();
        quick = true;
        break;
      case '--no-dbos':
        noValue();
        dbos = false;
        break;
      case '--turns':
        turns = count(flag, value());
        break;
      case '--rounds':
        rounds = count(flag, value());
        break;
      default:
        throw new PgBenchUsageError(`${word}: not an option of bench:pg`);
    }
  }
  const plan = quick ? QUICK_PG_BENCH : FULL_PG_BENCH;
  return { turns: turns ?? plan.turns, rounds: rounds ?? plan.rounds, dbos };
}
