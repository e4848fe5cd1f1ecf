import type { StatusArgs } from './args.ts';
import type { FleetTarget } from './options/target.ts';

/**
 * `status` lists a fleet when given --database-url, or when DURABLE_AGENT_DATABASE_URL is set
 * and no --dir was given; an explicit --dir always means the run in that directory.
 */
export function readsFleet(args: Pick<StatusArgs, 'databaseUrl' | 'dirGiven'>, env: NodeJS.ProcessEnv): boolean {
  return args.databaseUrl !== null || (!args.dirGiven && Boolean(env.DURABLE_AGENT_DATABASE_URL));
}

/** Where --run ID lives: the fleet (see readFleetTarget), or DIR's folder of runs. */
export function placeRun<T extends FleetTarget>(args: T, env: NodeJS.ProcessEnv): T {
  if (args.fleetRun === null) return args;
  const fleet = args.databaseUrl !== null || (!args.dirGiven && Boolean(env.DURABLE_AGENT_DATABASE_URL));
  return fleet ? args : { ...args, fleetRun: null, fileRun: args.fleetRun };
}
