/**
 * The arguments of `npm run bench:compare -- --against REF [--quick] [--only turn|file|resume|fleet]
 * [--write-docs]`: parsed into data, never printed nor exited on (compare.ts does that).
 */

export const BENCHMARKS = ['turn', 'file', 'resume', 'fleet'] as const;
export type Benchmark = (typeof BENCHMARKS)[number];

export interface CompareArgs {
  /** The git revision this tree is measured against. */
  against: string;
  quick: boolean;
  /** The benchmarks to run, in the order they run. */
  only: Benchmark[];
  /** Whether the figures replace the table of the docs' performance page (every benchmark run). */
  writeDocs: boolean;
}

export const COMPARE_USAGE = 'usage: npm run bench:compare -- --against REF [--quick] [--only turn|file|resume|fleet[,…]] [--write-docs]';

export class CompareUsageError extends Error {
  override readonly name = 'CompareUsageError';
  constructor(readonly problem: string) {
    super(`${problem}\n${COMPARE_USAGE}`);
  }
}

function isBenchmark(word: string): word is Benchmark {
  return (BENCHMARKS as readonly string[]).includes(word);
}

export function parseCompareArgs(argv: readonly string[]): CompareArgs {
  let against: string | undefined;
  let quick = false;
  let writeDocs = false;
  const only = new Set<Benchmark>();
  for (let at = 0; at < argv.length; at++) {
    const word = argv[at]!;
    const [flag, inline] = word.startsWith('--') && word.includes('=') ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)] : [word, undefined];
    const value = () => {
      const given = inline ?? argv[++at];
      if (given === undefined || given === '' || given.startsWith('--')) throw new CompareUsageError(`${flag} needs a value`);
      return given;
    };
    switch (flag) {
      case '--against':
        if (against !== undefined) throw new CompareUsageError('--against is given twice');
        against = value();
        break;
      case '--quick':
        if (inline !== undefined) throw new CompareUsageError('--quick takes no value');
        quick = true;
        break;
      case '--write-docs':
        if (inline !== undefined) throw new CompareUsageError('--write-docs takes no value');
        writeDocs = true;
        break;
      case '--only':
        for (const name of value().split(',')) {
          if (!isBenchmark(name)) throw new CompareUsageError(`--only ${name}: not a benchmark (${BENCHMARKS.join(', ')})`);
          only.add(name);
        }
        break;
      default:
        throw new CompareUsageError(`${word}: not an option of bench:compare`);
    }
  }
  if (against === undefined) throw new CompareUsageError('--against REF is required: the commit, tag or branch to compare this tree with');
  // The page's table holds every benchmark's rows: a run of some would drop the others'.
  if (writeDocs && only.size > 0 && only.size < BENCHMARKS.length) throw new CompareUsageError('--write-docs writes the table of every benchmark: give it without --only');
  return { against, quick, only: BENCHMARKS.filter((name) => only.size === 0 || only.has(name)), writeDocs };
}
