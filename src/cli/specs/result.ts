/** `durable-agent result`: its options and their parse. */
import { checkRunId } from '../../store/run-id.ts';
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { json } from '../options/output.ts';
import { databaseUrl, fleetRun } from '../options/target.ts';

const DAY_MS = 86_400_000;

/** result --run ID: a fleet run's state, and its answer once it has one. */
export interface ResultArgs {
  command: 'result';
  fleetRun: string;
  databaseUrl: string | null;
  /** --wait, or a --timeout given: wait for the run to come to rest. */
  wait: boolean;
  /** --timeout; null: wait as long as it takes. */
  timeoutMs: number | null;
  json: boolean;
}

export const resultSpec = command({
  name: 'result',
  words: [],
  synopsis: 'result --run ID [--wait] [--timeout DURATION] [--json]',
  summary: "a fleet run's state and answer; --wait waits until it comes to rest, woken by the database (no polling)",
  description:
    "Prints a fleet run's state and, once it has ended, its answer (or what it failed of); the exit code says where it\n" +
    'rests, as demo\'s does: 0 done, 6 failed, 9 cancelled, 7 waiting for a person, 5 or 8 stopped at a limit, and 130\n' +
    'while it has not come to rest (queued, running, or a decision or a raise given that a worker will take it on with).\n' +
    'With --wait it waits for the run to come to rest first: the database wakes it the moment the run does (LISTEN on\n' +
    'da_rest), so a wait costs one idle connection and no polling. The wait ends on its own only at --timeout (exit\n' +
    '130); the run goes on in the fleet regardless.',
  options: [
    fleetRun('the fleet run (required; submit prints its id, status --database-url lists the runs)'),
    databaseUrl,
    option({ key: 'wait', type: 'boolean', help: 'wait until the run comes to rest (done, failed, cancelled, waiting for a person, stopped at a limit)' }),
    option({
      key: 'timeoutMs',
      type: 'duration',
      value: 'DURATION',
      help: 'wait at most this long (implies --wait), then exit 130; the run goes on',
      min: 1_000,
      max: 7 * DAY_MS,
      defaultText: 'no limit',
      api: 'awaitRun.timeoutMs',
    }),
    { ...json, help: 'print the result as JSON: runId, state, finished, resting, text, usage, failure, waiting, turn' },
  ],
  examples: [
    'durable-agent result --database-url postgresql://user@db-host/agents --run RUN_ID',
    'durable-agent result --run RUN_ID --wait --timeout 10m --json',
  ],
  parse: (values): ResultArgs => {
    if (values.run === undefined) {
      throw new UsageError('result reads a fleet run: it needs --run ID (submit prints the id; status --database-url lists the runs).');
    }
    return {
      command: 'result',
      fleetRun: checkRunId(values.run),
      databaseUrl: values.databaseUrl ?? null,
      wait: values.wait || values.timeoutMs !== undefined,
      timeoutMs: values.timeoutMs ?? null,
      json: values.json,
    };
  },
});
