/** `durable-agent cancel`, `pause` and `unpause`: their options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { by } from './decide.ts';
import { type FleetTarget, fleetDatabaseUrl, fleetRun, readDir, readFleetTarget } from '../options/target.ts';

/** cancel and pause: a run in --dir, or a fleet run (--run ID). */
export interface ControlArgs extends FleetTarget {
  command: 'cancel' | 'pause';
  /** cancel --reason. */
  reason: string | null;
  /** --by, else the CLI's user name with host and pid (filled in by the command). */
  by: string | null;
}

/** unpause --run ID: clear a fleet run's pause. */
export interface UnpauseArgs {
  command: 'unpause';
  fleetRun: string;
  databaseUrl: string | null;
}

export const cancelSpec = command({
  name: 'cancel',
  words: [],
  synopsis: 'cancel [--dir DIR | --run ID] [--reason TEXT] [--by NAME]',
  summary: 'end a run for good: it stops at its next step, in the final state cancelled (exit 9)',
  description:
    'Asks the run to stop at its next step boundary and end in the final state cancelled, with who and why. The\n' +
    'process that drives it is told at once: a running tool gets an aborted ctx.signal and is awaited up to its time\n' +
    'limit, its outcome recorded; then the process exits 9. A run no process drives is cancelled here and now. A\n' +
    'cancelled run is never resumed (fork it to try again from a step); a finished run is refused (exit 2).',
  options: [
    readDir,
    fleetRun('a run of the fleet (its id, as submit printed it), cancelled through PostgreSQL (--database-url)'),
    fleetDatabaseUrl,
    option({ key: 'reason', type: 'string', value: 'TEXT', help: 'why, kept with the cancelled state', api: 'ControlOptions.reason' }),
    { ...by, help: 'who cancels, as the journal records it', api: 'ControlOptions.by' },
  ],
  examples: ['durable-agent cancel --dir demo-run --reason "wrong task"', 'durable-agent cancel --database-url postgresql://user@db-host:5432/agents --run RUN_ID'],
  parse: (values, { cwd }): ControlArgs => {
    const reason = values.reason ?? null;
    if (reason !== null && reason.trim() === '') throw new UsageError('--reason is empty: say why, e.g. --reason "wrong task", or leave it out.');
    return { command: 'cancel', ...readFleetTarget('cancel', values, cwd), reason, by: values.by ?? null };
  },
});

export const pauseSpec = command({
  name: 'pause',
  words: [],
  synopsis: 'pause [--dir DIR | --run ID] [--by NAME]',
  summary: 'stop a running run at its next step, saved and resumable (its process exits 130)',
  description:
    'Asks the process that drives the run to stop at its next step boundary, like Ctrl-C: everything is saved and\n' +
    '--resume goes on (and clears the pause); status says who paused it. A fleet run (--run) is not claimed by any\n' +
    'worker while paused: `durable-agent unpause --run ID` lets the fleet take it up again. A run that is not running\n' +
    'has nothing to pause (exit 2).',
  options: [readDir, fleetRun('a run of the fleet, paused through PostgreSQL (--database-url)'), fleetDatabaseUrl, { ...by, help: 'who pauses, as status shows it', api: 'ControlOptions.by' }],
  examples: ['durable-agent pause --dir demo-run', 'durable-agent pause --database-url postgresql://user@db-host:5432/agents --run RUN_ID'],
  parse: (values, { cwd }): ControlArgs => ({ command: 'pause', ...readFleetTarget('pause', values, cwd), reason: null, by: values.by ?? null }),
});

export const unpauseSpec = command({
  name: 'unpause',
  aliases: ['resume'],
  words: [],
  synopsis: 'unpause --run ID [--database-url URL]',
  summary: 'let the workers of a fleet take a paused run up again',
  description:
    'Clears the pause of a fleet run: a worker claims it and goes on from its last step. A run in a directory is\n' +
    'resumed by the command that drives it (demo --resume, run --resume), which clears its pause itself.',
  options: [fleetRun('the paused run of the fleet (required)'), fleetDatabaseUrl],
  examples: ['durable-agent unpause --database-url postgresql://user@db-host:5432/agents --run RUN_ID'],
  parse: (values): UnpauseArgs => {
    if (values.run === undefined) {
      throw new UsageError(
        'unpause lets a paused fleet run go on: it needs --run ID. A run in a directory is resumed by the command that drives it: durable-agent demo --resume --dir DIR (or run --resume).',
      );
    }
    return { command: 'unpause', fleetRun: values.run, databaseUrl: values.databaseUrl ?? null };
  },
});
