/**
 * npm run bench:scale [-- --runs N] [--files N] [--only fleet|folder]: how the operations a
 * person or a worker makes grow with what a fleet or a folder holds. The fleet: 1,000 runs
 * against N (default 1,000,000) in a throwaway PostgreSQL cluster (scale-fleet.ts); file runs:
 * 1,000 against N (default 10,000) in a temp folder (scale-folder.ts). Each operation is timed
 * at both sizes, interleaved, and the ratio printed; the target is 2× at most.
 */
import os from 'node:os';
import { scaleFleet } from './scale-fleet.ts';
import { scaleFolder } from './scale-folder.ts';

function numberAfter(flag: string, fallback: number): number {
  const at = process.argv.indexOf(flag);
  if (at === -1) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < 2000) throw new Error(`${flag} takes a whole number of runs, 2000 at least (the small side has 1000)`);
  return value;
}

const runs = numberAfter('--runs', 1_000_000);
const files = numberAfter('--files', 10_000);
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt === -1 ? null : process.argv[onlyAt + 1];
const log = (line: string) => console.log(line);

console.log(`node ${process.version}, ${os.cpus().length} cores; load average ${os.loadavg()[0]!.toFixed(1)}`);
if (only !== 'folder') await scaleFleet(runs, log);
if (only !== 'fleet') await scaleFolder(files, log);
console.log(`load average at the end ${os.loadavg()[0]!.toFixed(1)}`);
