/**
 * Which finished runs a prune removes, the same rule for both stores: the runs older than
 * `olderThanMs` (by when they finished), except the `keep` newest. Given both, a run goes only
 * when both say so. Unfinished runs are never candidates: the stores leave them out first.
 */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export interface PruneOptions {
  /** Remove finished runs that finished at least this long ago. */
  olderThanMs?: number | null | undefined;
  /** Keep this many of the newest finished runs, whatever their age. */
  keep?: number | null | undefined;
  /** List what would go; remove nothing. */
  dryRun?: boolean | undefined;
  /** The clock the age is measured by (file store; PostgreSQL uses the server's). */
  now?: number | undefined;
}

/** A finished run as a prune sees it. */
export interface PruneCandidate {
  id: string;
  /** The final state: done, failed or stoppedAtMaxTurns. */
  state: string;
  /** When it finished (its last record), epoch ms. */
  finishedAt: number;
  bytes: number;
}

/** Neither --older-than nor --keep: a prune without a rule would remove every finished run, so it is refused. */
export class PruneRuleMissingError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'PruneRuleMissingError';
  constructor() {
    super('prune needs a rule: --older-than DURATION (e.g. 30d), --keep N (the N newest finished runs stay), or both. Nothing was removed.');
  }
}

export class PruneOptionError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'PruneOptionError';
  constructor(
    readonly option: 'olderThanMs' | 'keep',
    readonly value: unknown,
  ) {
    super(`${option} must be a whole number of 0 or more, not ${String(value)}. Nothing was removed.`);
  }
}

export function checkPruneOptions(options: PruneOptions): void {
  const { olderThanMs, keep } = options;
  if ((olderThanMs ?? null) === null && (keep ?? null) === null) throw new PruneRuleMissingError();
  for (const [option, value] of [['olderThanMs', olderThanMs], ['keep', keep]] as const) {
    if (value !== null && value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) throw new PruneOptionError(option, value);
  }
}

/** The candidates to remove, newest first. `now` is the clock the ages are measured by. */
export function selectForPruning<T extends PruneCandidate>(candidates: readonly T[], options: PruneOptions, now: number): T[] {
  checkPruneOptions(options);
  const newestFirst = [...candidates].sort((a, b) => b.finishedAt - a.finishedAt || a.id.localeCompare(b.id));
  const keep = options.keep ?? 0;
  const olderThan = options.olderThanMs ?? null;
  return newestFirst.filter((run, index) => index >= keep && (olderThan === null || run.finishedAt <= now - olderThan));
}
