/**
 * Named crash points, inert unless armed. `CRASH_AFTER=after-effect-write:3` stops the process
 * right after the third time it passes the point "effect-write" (the third ledger write).
 * Every persisted transition is a point, named after what just became durable; two more sit
 * between effects: right after a model reply arrived (nothing saved yet) and right after a tool
 * returned (its ledger entry not written yet). A turn's last ledger entry is written without an
 * fsync of its own (checkpoint B, written right after it, fsyncs both): after-effect-write there
 * is a state a kill leaves, and a power loss takes back (the crash suite tries both).
 */
import { POINT_NAMES, type PointName } from '../store/journal/record-points.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { isThenable } from '../util/thenable.ts';

export type CrashPointName = PointName | 'tool-return';

/** The record points in their order, with the return of a tool (before its ledger write) after checkpoint A. */
export const CRASH_POINT_NAMES: readonly CrashPointName[] = POINT_NAMES.flatMap((point): CrashPointName[] =>
  point === 'save-a' ? [point, 'tool-return'] : [point],
);

/**
 * What an armed crash point throws in a program (the default of `onCrash`): the run stops right
 * there, as a kill would stop it, and everything up to the point is durable. Catch it and call
 * resumeRun (now or in a later process) to go on.
 */
export class SimulatedCrash extends DurableAgentError {
  static override readonly kind: ErrorKind = 'stopped';
  override readonly name = 'SimulatedCrash';
  constructor(readonly label: string) {
    super(`simulated kill at ${label} (armed by crashAfter / CRASH_AFTER): the run is saved up to this point; resumeRun picks it up.`);
  }

  /** What a process killed by SIGKILL exits with, which a simulated crash imitates. */
  override get exitCode(): number {
    return SIMULATED_CRASH_EXIT_CODE;
  }
}

export class CrashSpecError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'CrashSpecError';
  constructor(readonly spec: string) {
    super(
      `CRASH_AFTER=${spec} names no crash point. Use after-<point>:<n> with n ≥ 1 and <point> one of: ` +
        `${CRASH_POINT_NAMES.join(', ')} (e.g. after-effect-write:3).`,
    );
  }
}

/**
 * Called at an armed crash point. A handler that returns a promise is awaited before the run
 * goes on, so one that ends the process may first finish asynchronous work (flush traces).
 */
export type CrashHandler = (label: string) => void;

/**
 * What an armed crash point does: 'throw' a SimulatedCrash (the default), 'exit' the process
 * with code 137 as a killed process would (one line on stderr says why), or call a function.
 */
export type CrashAction = 'throw' | 'exit' | CrashHandler;

/** The exit code of a process killed by SIGKILL (128 + 9), which a simulated crash imitates. */
export const SIMULATED_CRASH_EXIT_CODE = 137;

/** The library's default: unwind with SimulatedCrash. */
export function throwSimulatedCrash(label: string): never {
  throw new SimulatedCrash(label);
}

/** onCrash: 'exit': end the process on the spot, like a kill: no unwinding, no cleanup. */
export function exitOnSimulatedCrash(label: string): never {
  process.stderr.write(`durable-agent: simulated kill at ${label} (crashAfter / CRASH_AFTER): exiting with code ${SIMULATED_CRASH_EXIT_CODE}; the run is saved up to this point, resumeRun picks it up.\n`);
  process.exit(SIMULATED_CRASH_EXIT_CODE);
}

export function crashHandlerOf(action: CrashAction | undefined): CrashHandler {
  if (action === undefined || action === 'throw') return throwSimulatedCrash;
  if (action === 'exit') return exitOnSimulatedCrash;
  return action;
}

/** How a run's crash points are armed: by a spec and what an armed one does, or made by the caller. */
export interface CrashSpec {
  crashAfter?: string | undefined;
  onCrash?: CrashAction | undefined;
  /** Made by the caller (to read which were passed); replaces crashAfter and onCrash. */
  crashPoints?: CrashPoints | undefined;
}

/** The run's crash points. Nobody reads the labels passed of points made here: not kept (a long run would hold one per record). */
export function crashPointsOf(spec: CrashSpec): CrashPoints {
  return spec.crashPoints ?? new CrashPoints(spec.crashAfter, crashHandlerOf(spec.onCrash), false);
}

export class CrashPoints {
  private readonly armed = new Set<string>();
  private readonly counts = new Map<string, number>();
  /**
   * Every label passed, in order (for --list-crash-points and the crash suite); kept only when
   * `listPassed`, so that a long run does not hold a label for each of its records.
   */
  readonly passed: string[] = [];

  constructor(
    spec: string | undefined,
    private readonly onCrash: CrashHandler = throwSimulatedCrash,
    private readonly listPassed = true,
  ) {
    for (const label of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
      const match = /^after-([a-z-]+):([1-9]\d*)$/.exec(label);
      if (!match || !(CRASH_POINT_NAMES as readonly string[]).includes(match[1]!)) throw new CrashSpecError(label);
      this.armed.add(label);
    }
  }

  /** Passes a point: counts it, and crashes if that pass is armed. */
  pass(point: CrashPointName): Promise<void> | undefined {
    return this.fireIfArmed(this.reach(point));
  }

  /** Counts a pass and returns its label, without crashing yet (so the caller can report it first). */
  reach(point: CrashPointName): string {
    const count = (this.counts.get(point) ?? 0) + 1;
    this.counts.set(point, count);
    const label = `after-${point}:${count}`;
    if (this.listPassed) this.passed.push(label);
    return label;
  }

  /** Crashes if the label is armed; returns the handler's promise when it gave one. */
  fireIfArmed(label: string): Promise<void> | undefined {
    if (!this.armed.has(label)) return undefined;
    const outcome: unknown = this.onCrash(label);
    return isThenable(outcome) ? Promise.resolve(outcome).then(() => undefined) : undefined;
  }
}
