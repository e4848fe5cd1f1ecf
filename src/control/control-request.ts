/**
 * Cancel and pause, asked of a run from outside the process that drives it. Only the run's
 * writer writes its journal: a request is written to the run's control inbox (a file in
 * DIR/.durable-agent/control/, a row of da_controls), and the writer honours it at its next step
 * boundary. A cancel becomes the run's final state `cancelled`; a pause stops the process like
 * Ctrl-C, and stays in the inbox (status says "paused by …") until a resume clears it.
 */
import type { Cancellation } from '../../machines/agent-loop.types.ts';

export type ControlKind = 'cancel' | 'pause';

export const CONTROL_KINDS: readonly ControlKind[] = ['cancel', 'pause'];

export interface ControlRequest {
  kind: ControlKind;
  /** Who asked: a user name with host and pid from the CLI, what a program passes otherwise. */
  by: string;
  /** Why (cancel --reason); null when none was given. */
  reason: string | null;
  /** Epoch milliseconds when it was asked. */
  at: number;
}

/**
 * Where control requests wait for the run's writer. One request per kind at a time (a second
 * cancel is 'exists', nothing written); a request is whole or absent, whatever kills the writer.
 */
export interface ControlInbox {
  write(request: ControlRequest): Promise<'written' | 'exists'>;
  /** Cheap when empty (one stat, readdir or indexed query): called at every step boundary. */
  read(): Promise<ControlRequest[]>;
  /** Removes the request of this kind (once what it asked is durable, or a resume cleared a pause). */
  settle(kind: ControlKind): Promise<void>;
}

export function cancellationOf(request: ControlRequest): Cancellation {
  return { by: request.by, reason: request.reason, at: request.at };
}

/** The request that counts: a cancel outranks a pause. */
export function strongest(requests: readonly ControlRequest[]): ControlRequest | null {
  return requests.find((request) => request.kind === 'cancel') ?? requests.find((request) => request.kind === 'pause') ?? null;
}

/** Why a stored request is not a whole one, or null. */
export function controlProblem(value: unknown): string | null {
  const request = value as Partial<ControlRequest> | null;
  if (request === null || typeof request !== 'object') return 'it holds no request';
  if (!CONTROL_KINDS.includes(request.kind as ControlKind)) return `its kind is ${String(request.kind)}`;
  if (typeof request.by !== 'string' || request.by.trim() === '') return 'it does not say who asked';
  if (request.reason !== null && typeof request.reason !== 'string') return 'its reason is not text';
  if (typeof request.at !== 'number' || !Number.isFinite(request.at)) return 'it does not say when';
  return null;
}

export function requestWords(request: Pick<ControlRequest, 'by' | 'reason' | 'at'>): string {
  return `by ${request.by} at ${new Date(request.at).toISOString()}${request.reason ? ` (reason: ${request.reason})` : ''}`;
}

/** A resume of a run that was cancelled: refused (fork it to try again from one of its steps). */
export class RunCancelledError extends Error {
  override readonly name = 'RunCancelledError';
  constructor(
    readonly location: string,
    readonly cancellation: Cancellation,
    readonly forkAdvice: string,
  ) {
    super(`The run in ${location} was cancelled ${requestWords(cancellation)}: a cancelled run is never resumed. ${forkAdvice} Nothing was written.`);
  }
}

/** cancel or pause refused: what the run's state is, and what to do instead. Nothing was written. */
export class ControlRefusedError extends Error {
  override readonly name = 'ControlRefusedError';
  constructor(
    readonly kind: ControlKind,
    readonly why: 'finished' | 'not-running' | 'already-asked',
    message: string,
  ) {
    super(message);
  }
}
