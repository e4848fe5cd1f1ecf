/**
 * The running process's side of cancel and pause: it looks at the run's control inbox at every
 * step boundary (before each model call and each tool call), and watches it while a tool runs or
 * the run waits for a decision, so that the tool's ctx.signal is aborted at once (the tool is
 * still awaited up to its time limit, and its outcome recorded as usual).
 */
import type { AgentEvent } from '../../machines/agent-loop.types.ts';
import { RunStoppedError } from '../core/stop-errors.ts';
import { cancellationOf, type ControlInbox, type ControlRequest, requestWords, strongest } from './control-request.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** How often a running tool's or a waiting run's inbox is looked at. */
export const CONTROL_POLL_MS = 200;

/** The run stopped at a step boundary because it was paused; everything is saved and a resume goes on. */
export class RunPausedError extends RunStoppedError {
  override readonly name = 'RunPausedError';
  constructor(readonly request: ControlRequest) {
    super(`paused ${requestWords(request)}`);
  }
}

/** Aborts a running tool's signal: a control request arrived while it ran. */
export class ControlRequestedError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'stopped';
  override readonly name = 'ControlRequestedError';
  constructor(readonly request: ControlRequest) {
    super(`the run was asked to ${request.kind === 'cancel' ? 'cancel' : 'pause'} ${requestWords(request)}`);
  }
}

/** What asked() answers for a run nobody can cancel or pause (no inbox). */
const NOTHING_ASKED: Promise<boolean> = Promise.resolve(false);

/** The signal of a run nobody can cancel or pause (no inbox): one for all, its controller kept by nobody. */
const NEVER_ABORTED = new AbortController().signal;

export class RunControl {
  /** Set once a request was seen: a wait that ended without a decision goes back to the boundary. */
  requested: ControlRequest | null = null;

  constructor(private readonly inbox: ControlInbox | undefined) {}

  /**
   * At a step boundary: the CANCEL event to take when a cancel waits; throws RunPausedError when
   * a pause waits; null to go on. Null at once, not a promise of it, for a run nobody can cancel
   * or pause (no inbox): a boundary comes several times a turn.
   */
  atBoundary(): Promise<Extract<AgentEvent, { type: 'CANCEL' }> | null> | null {
    return this.inbox ? this.lookAtBoundary() : null;
  }

  private async lookAtBoundary(): Promise<Extract<AgentEvent, { type: 'CANCEL' }> | null> {
    const request = await this.look();
    if (!request) return null;
    if (request.kind === 'pause') throw new RunPausedError(request);
    return { type: 'CANCEL', cancellation: cancellationOf(request) };
  }

  /** Whether a cancel or pause waits: a turn's calls not yet started are then left for the boundary. */
  asked(): Promise<boolean> {
    // Asked every turn: for a run nobody can cancel or pause (no inbox), one answer made once.
    return this.inbox ? this.lookAsked() : NOTHING_ASKED;
  }

  private async lookAsked(): Promise<boolean> {
    return (await this.look()) !== null;
  }

  /**
   * Runs `work` with a signal aborted when a request arrives meanwhile (or when `also` aborts):
   * any request (`for: 'any'`, a wait for a person, where nothing runs), or a cancel only
   * (`'cancel'`, a tool's call: a pause lets it finish, and the run pauses once its outcome is
   * recorded, so a payment under way is never told it failed). The inbox is polled only while the work runs.
   */
  watch<T>(work: (signal: AbortSignal) => Promise<T>, also?: AbortSignal, stopsFor: 'any' | 'cancel' = 'any'): Promise<T> {
    // Without an inbox nothing is watched: the work's own promise, without an async frame around it (a tool call's, every turn).
    if (!this.inbox) {
      try {
        return work(also ?? NEVER_ABORTED);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.watchInbox(work, also, stopsFor);
  }

  private async watchInbox<T>(work: (signal: AbortSignal) => Promise<T>, also: AbortSignal | undefined, stopsFor: 'any' | 'cancel'): Promise<T> {
    const controller = new AbortController();
    const signal = also ? AbortSignal.any([also, controller.signal]) : controller.signal;
    let looking = false;
    const timer = setInterval(() => {
      if (looking || controller.signal.aborted) return;
      looking = true;
      this.look()
        .then((request) => {
          if (request && (stopsFor === 'any' || request.kind === 'cancel')) controller.abort(new ControlRequestedError(request));
        })
        // A passing read failure: the next look, or the next boundary, tries again.
        .catch(() => {})
        .finally(() => (looking = false));
    }, CONTROL_POLL_MS);
    timer.unref();
    try {
      return await work(signal);
    } finally {
      clearInterval(timer);
    }
  }

  /** The signal `watch` gave, or undefined when nothing can ever abort it (a listener on it would wait in vain). */
  abortable(signal: AbortSignal): AbortSignal | undefined {
    return signal === NEVER_ABORTED ? undefined : signal;
  }

  private async look(): Promise<ControlRequest | null> {
    if (!this.inbox) return null;
    const request = strongest(await this.inbox.read());
    if (request) this.requested = request;
    return request;
  }
}
