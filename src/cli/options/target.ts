/**
 * Which run a command acts on: the run in a directory (--dir), or a run of the fleet (--run ID,
 * in the PostgreSQL database of --database-url or DURABLE_AGENT_DATABASE_URL).
 */
import { UsageError } from '../usage-error.ts';
import { option, type ValuesOf } from './option.ts';

export const dir = (help: string) => option({ key: 'dir', type: 'string', value: 'DIR', help, defaultText: 'the current directory' });
export const runDir = dir('the directory the run works in; its state is kept in DIR/.durable-agent/');
export const readDir = dir('the directory of the run to read (the one given to demo or run)');

export const databaseUrl = option({
  key: 'databaseUrl',
  type: 'string',
  value: 'URL',
  help: 'the PostgreSQL database of the fleet, postgresql://user@host:5432/db',
  defaultText: '$DURABLE_AGENT_DATABASE_URL',
});
export const fleetDatabaseUrl = { ...databaseUrl, help: 'with --run: the PostgreSQL database of the fleet, postgresql://user@host:5432/db' };
export const fleetRun = (help = 'a run of the fleet (its id, as submit printed it): the decision goes through PostgreSQL (--database-url)') =>
  option({ key: 'run', type: 'string', value: 'ID', help });

export const fleetTargetOptions = [readDir, fleetRun(), fleetDatabaseUrl] as const;

export interface FleetTarget {
  dir: string;
  /** --run ID: a fleet run, in PostgreSQL (--database-url or DURABLE_AGENT_DATABASE_URL); null: the run in dir. */
  fleetRun: string | null;
  databaseUrl: string | null;
}

/** --run ID (with --database-url or DURABLE_AGENT_DATABASE_URL): a fleet run; else the run in --dir. */
export function readFleetTarget(command: string, values: ValuesOf<typeof fleetTargetOptions>, cwd: string): FleetTarget {
  const fleetRun = values.run ?? null;
  const databaseUrl = values.databaseUrl ?? null;
  if (fleetRun !== null && values.dir !== undefined) {
    throw new UsageError(`${command} acts on the run in --dir or the fleet run --run ID, not both: give one of them.`);
  }
  if (fleetRun === null && databaseUrl !== null) {
    throw new UsageError(`${command} --database-url needs --run ID: the fleet run (its id, as submit printed it; durable-agent status --database-url lists them).`);
  }
  return { dir: values.dir ?? cwd, fleetRun, databaseUrl };
}
