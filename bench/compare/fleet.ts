/**
 * bench:compare's fleet: this tree and REF each drive a user's agent (bench/fleet-agents.mjs) with
 * real `durable-agent worker` processes on one throwaway PostgreSQL cluster, in turn, repetition
 * after repetition (the order swapped every time), each repetition on a fresh database at the
 * schema of the tree it measures, made and submitted to by that tree's own code (an older worker
 * refuses a newer schema). The figure is bench:fleet's: records per CPU second of all worker
 * processes over the timed runs. Both trees are built first (a worker runs its tree's dist/); the
 * cluster and every worker are taken down on every way out.
 */
import pg from 'pg';
import { startPostgres, postgresBinDir } from '../../test/helpers/postgres-server.ts';
import { onExit } from '../exit-cleanup.ts';
import { type Build, type BuildDatabase, buildTree, databaseOf, measureAgentRuns, readyForAgentRuns } from '../fleet-agent-throughput.ts';
import { freshDatabase, startWorkerOf } from '../fleet-workers.ts';
import { describeCheckout } from '../git-tree.ts';
import { type ComparePlan, orderOf, type Side } from './measure.ts';
import type { Samples, Skipped } from './report.ts';

export function fleetRowName(workers: number): string {
  return `fleet of ${workers} worker${workers === 1 ? '' : 's'}, records per worker CPU second`;
}

const TITLE = 'fleet, records per worker CPU second';

/**
 * Each tree's database code, or what keeps REF's fleet from being measured here (a commit older
 * than a user's agent in a fleet, no PostgreSQL). This tree without a fleet is a broken tree: thrown.
 */
export async function fleetDatabases(builds: readonly Build[]): Promise<{ missing: string } | { databases: BuildDatabase[] }> {
  const databases: BuildDatabase[] = [];
  for (const build of builds) {
    const loaded = await databaseOf(build);
    if (!loaded.ok && build.name === 'ours') throw new Error(`${loaded.missing}: this tree cannot run the fleet benchmark`);
    if (!loaded.ok) return { missing: `${loaded.missing}: it cannot run a user's agent in a fleet` };
    databases.push(loaded.database);
  }
  if (postgresBinDir() === null) return { missing: 'no PostgreSQL binaries (/usr/lib/postgresql/<v>/bin, or DURABLE_AGENT_PG_BIN): apt-get install postgresql' };
  return { databases };
}

export async function measureFleet(sides: readonly [Side, Side], _root: string, plan: ComparePlan, log: (line: string) => void): Promise<Array<Samples | Skipped>> {
  const builds = sides.map((side): Build => ({ name: side.key === 'ours' ? 'ours' : 'baseline', repo: side.dir, commit: describeCheckout(side.dir) }));
  const found = await fleetDatabases(builds);
  if ('missing' in found) {
    log(`  fleet: skipped, ${found.missing}`);
    return [{ benchmark: 'fleet', name: TITLE, skipped: found.missing }];
  }
  const [ours, ref] = sides;
  log(`  fleet: building this tree's dist/ and REF's (${ref.dir})`);
  buildTree(ours.dir);
  readyForAgentRuns(ours.dir, ref.dir);
  const server = await startPostgres();
  const stopServer = onExit('the PostgreSQL cluster', () => server.stop());
  const admin = new pg.Pool({ connectionString: server.url, max: 2 });
  const samples: Samples[] = [];
  try {
    const { runs, warmUpRuns } = plan.fleet;
    for (const workers of plan.fleet.workers) {
      const perCpu = { ours: [] as number[], ref: [] as number[] };
      for (let rep = 0; rep < plan.fleet.reps; rep++) {
        for (const at of orderOf([0, 1] as const, rep)) {
          const side = sides[at]!;
          const url = await freshDatabase(admin, server.url, `compare_${side.key}`, found.databases[at]!.migrate);
          const result = await measureAgentRuns(builds[at]!, found.databases[at]!, url, { workers, webhooks: false, runs, warmUpRuns }, startWorkerOf);
          perCpu[side.key].push(result.recordsPerCpuSecond);
          log(`  fleet: ${workers} worker(s), repetition ${rep + 1}, ${side.key === 'ours' ? 'this tree' : 'REF'}: ${result.recordsPerCpuSecond.toFixed(0)} records per worker CPU second`);
        }
      }
      log(`  fleet: ${workers} worker(s) done (${plan.fleet.reps} repetitions of ${runs} runs each, after ${warmUpRuns} a worker untimed)`);
      samples.push({ benchmark: 'fleet', name: fleetRowName(workers), unit: 'records/CPU s', ...perCpu });
    }
  } finally {
    await admin.end();
    stopServer();
  }
  return samples;
}
