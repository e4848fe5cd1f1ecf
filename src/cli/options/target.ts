/**
 * Which run a command acts on: the run in a directory (--dir), or a run of the fleet (--run ID,
 * in the PostgreSQL database of --database-url or DURABLE_AGENT_DATABASE_URL).
 */
import { checkRunId } from '../../store/run-id.ts';
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
export const fleetRun = (
  help = "the run's id: a run by id in DIR's folder of runs, or, with --database-url (or DURABLE_AGENT_DATABASE_URL and no --dir), a run of the fleet",
) => option({ key: 'run', type: 'string', value: 'ID', help, api: 'StartOptions.runId' });

export const fleetTargetOptions = [readDir, fleetRun(), fleetDatabaseUrl] as const;

export interface FleetTarget {
  dir: string;
  /** Whether --dir was given: --run ID then names a run of DIR even where a fleet database is configured. */
  dirGiven: boolean;
  /** --run ID of a fleet run, in PostgreSQL (--database-url or DURABLE_AGENT_DATABASE_URL); null: a run in dir. */
  fleetRun: string | null;
  /** --run ID of a run in DIR's folder of runs; null with fleetRun null: the run of DIR itself. */
  fileRun: string | null;
  databaseUrl: string | null;
}

/**
 * --run ID names a run by its id: of the fleet with --database-url, or with
 * DURABLE_AGENT_DATABASE_URL set and no --dir (placeRun decides, knowing the environment);
 * otherwise of DIR's folder of runs. Parsed as a fleet run; placeRun moves it.
 */
export function readFleetTarget(command: string, values: ValuesOf<typeof fleetTargetOptions>, cwd: string, options: { wholeFleet?: boolean } = {}): FleetTarget {
  const run = values.run === undefined ? null : checkRunId(values.run);
  const databaseUrl = values.databaseUrl ?? null;
  if (values.dir !== undefined && databaseUrl !== null) {
    throw new UsageError(`${command} acts on a run in --dir or on a run of the fleet at --database-url, not both: give one of them.`);
  }
  // A command that reads every run of the fleet (wholeFleet) takes --database-url alone.
  if (run === null && databaseUrl !== null && !options.wholeFleet) {
    throw new UsageError(`${command} --database-url needs --run ID: the fleet run (its id, as submit printed it; durable-agent status --database-url lists them).`);
  }
  return { dir: values.dir ?? cwd, dirGiven: values.dir !== undefined, fleetRun: run, fileRun: null, databaseUrl };
}

/** A file run's id, for the commands that act on runs of a folder only (demo, run, status, history). */
export const fileRun = option({
  key: 'run',
  type: 'string',
  value: 'ID',
  help: "the run's id in DIR's folder of runs (DIR/.durable-agent/runs/ID): started once, attached to after",
  api: 'StartOptions.runId',
});

export function readFileRun(value: string | undefined): string | null {
  return value === undefined ? null : checkRunId(value);
}
