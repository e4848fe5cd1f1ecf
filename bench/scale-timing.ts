/**
 * Timing one set of operations at two sizes, interleaved: each repeat runs the operation on the
 * small side, then on the large one, so a burst of other work on a shared machine falls on both.
 * The median of each is kept, and the ratio of the large to the small said beside them.
 */
export interface Operation {
  name: string;
  run: () => Promise<void>;
}

const REPEATS = 9;
/** An operation slower than this at either size is timed only three times: it is the finding. */
const SLOW_MS = 2000;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function timed(operation: Operation): Promise<number> {
  const started = performance.now();
  await operation.run();
  return performance.now() - started;
}

/** `operations[i]` are the operations at `sizes[i]`, the same names in the same order; one line each, with the ratio. */
export async function timeInterleaved(sizes: readonly number[], operations: readonly Operation[][]): Promise<string[]> {
  const lines: string[] = [];
  const [small, large] = operations as [Operation[], Operation[]];
  for (let i = 0; i < small.length; i++) {
    // Once each first: the code warmed up, the tables' pages read, before a sample counts.
    const first = [await timed(small[i]!), await timed(large[i]!)];
    const repeats = Math.max(...first) > SLOW_MS ? 3 : REPEATS;
    const samples: [number[], number[]] = [[], []];
    for (let r = 0; r < repeats; r++) {
      samples[0].push(await timed(small[i]!));
      samples[1].push(await timed(large[i]!));
    }
    const [a, b] = [median(samples[0]), median(samples[1])];
    lines.push(
      `  ${small[i]!.name.padEnd(24)} ${sizes[0]!.toLocaleString('en').padStart(9)}: ${a.toFixed(1).padStart(9)} ms   ${sizes[1]!.toLocaleString('en').padStart(9)}: ${b.toFixed(1).padStart(9)} ms   ${(b / a).toFixed(2).padStart(7)}×  (${repeats} each)`,
    );
  }
  return lines;
}
