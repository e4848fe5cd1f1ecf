import type { StatusArgs } from './args.ts';

/**
 * `status` lists a fleet when given --database-url, or when DURABLE_AGENT_DATABASE_URL is set
 * and no --dir was given; an explicit --dir always means the run in that directory.
 */
export function readsFleet(args: Pick<StatusArgs, 'databaseUrl' | 'dirGiven'>, env: NodeJS.ProcessEnv): boolean {
  return args.databaseUrl !== null || (!args.dirGiven && Boolean(env.DURABLE_AGENT_DATABASE_URL));
}
