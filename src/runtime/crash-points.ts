/**
 * Named crash points, inert unless armed. `CRASH_AFTER=after-effect-write:3` stops the process
 * right after the third time it passes the point "effect-write" (the third ledger write).
 * Every persisted transition is a point, named after what just became durable; two more sit
 * between effects: right after a model reply arrived (nothing saved yet) and right after a tool
 * returned (its ledger entry not written yet).
 */
import type { PointName } from '../store/record-points.ts';

export type CrashPointName = PointName | 'tool-return';

export const CRASH_POINT_NAMES: readonly CrashPointName[] = [
  'save-start',
  'model-reply',
  'save-a',
  'tool-return',
  'effect-write',
  'save-b',
  'save-pause',
  'save-done',
  'save-max-turns',
  'save-failed',
  'save-reopen',
];

export class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash';
  constructor(readonly label: string) {
    super(`simulated kill at ${label}`);
  }
}

export class CrashSpecError extends Error {
  override readonly name = 'CrashSpecError';
  constructor(readonly spec: string) {
    super(
      `CRASH_AFTER=${spec} names no crash point. Use after-<point>:<n> with n ≥ 1 and <point> one of: ` +
        `${CRASH_POINT_NAMES.join(', ')} (e.g. after-effect-write:3).`,
    );
  }
}

export type CrashHandler = (label: string) => void;

/** The library's default: unwind with SimulatedCrash. The CLI exits the process on the spot instead. */
export function throwSimulatedCrash(label: string): never {
  throw new SimulatedCrash(label);
}

export class CrashPoints {
  private readonly armed = new Set<string>();
  private readonly counts = new Map<string, number>();
  /** Every label passed, in order (for --list-crash-points). */
  readonly passed: string[] = [];

  constructor(
    spec: string | undefined,
    private readonly onCrash: CrashHandler = throwSimulatedCrash,
  ) {
    for (const label of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
      const match = /^after-([a-z-]+):([1-9]\d*)$/.exec(label);
      if (!match || !(CRASH_POINT_NAMES as readonly string[]).includes(match[1]!)) throw new CrashSpecError(label);
      this.armed.add(label);
    }
  }

  /** Passes a point: counts it, and crashes if that pass is armed. */
  pass(point: CrashPointName): void {
    this.fireIfArmed(this.reach(point));
  }

  /** Counts a pass and returns its label, without crashing yet (so the caller can report it first). */
  reach(point: CrashPointName): string {
    const count = (this.counts.get(point) ?? 0) + 1;
    this.counts.set(point, count);
    const label = `after-${point}:${count}`;
    this.passed.push(label);
    return label;
  }

  fireIfArmed(label: string): void {
    if (this.armed.has(label)) this.onCrash(label);
  }
}
