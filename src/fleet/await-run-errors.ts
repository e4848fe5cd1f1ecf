/** The refusals of awaiting a fleet run, apart so that durable-agent/errors loads no store module. */
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** Where a fleet run stands: a state of the machine, or queued (no worker started it yet). */
export type FleetRunState = AgentStateName | 'queued';

export class FleetRunMissingError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'FleetRunMissingError';
  constructor(readonly runId: string) {
    super(
      `The fleet has no run with the id ${JSON.stringify(runId)}. Nothing was read. ` +
        'Check the id (submit prints it; status --database-url lists the runs) and that this is the fleet\'s database (--database-url or DURABLE_AGENT_DATABASE_URL).',
    );
  }
}

export class AwaitRunTimeoutError extends DurableAgentError {
  // Only the wait stopped: the run is intact and goes on in the fleet, as after an interrupt.
  static override readonly kind: ErrorKind = 'stopped';
  override readonly name = 'AwaitRunTimeoutError';
  constructor(
    readonly runId: string,
    readonly timeoutMs: number,
    /** The run's state when last read before the wait gave up; null: the database could not be read meanwhile. */
    readonly lastState: FleetRunState | null,
  ) {
    super(
      `Fleet run ${runId} did not come to rest within ${durationWords(timeoutMs)} (${lastState === null ? 'the database could not be read meanwhile' : `it is ${lastState}`}); ` +
        'it goes on in the fleet regardless. ' +
        `Wait again with a longer timeout (awaitRun, or durable-agent result --run ${runId} --wait --timeout DURATION), or see what it does with status.`,
    );
  }
}

function durationWords(ms: number): string {
  return ms >= 1_000 && ms % 1_000 === 0 ? `${ms / 1_000} s` : `${ms} ms`;
}
