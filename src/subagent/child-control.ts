/**
 * Cancel and pause of a parent, passed on to the child its call runs. A cancel aborts the call's
 * signal (the runtime does that for any tool): it is written to the child's inbox, and the child
 * ends cancelled too. A pause lets a tool's call finish, so the call's signal says nothing of it:
 * the parent's inbox is watched while the child runs, and a pause found there is written to the
 * child's, which stops at its next step; the call then stops with the parent's own pause, and the
 * parent stops without recording an outcome. The resume of the parent runs the call again, which
 * resumes the child, and a resume clears the child's pause: unpausing the parent unpauses it.
 * Grandchildren follow the same way, each from its own parent.
 */
import { CONTROL_POLL_MS, ControlRequestedError, RunPausedError } from '../control/run-control.ts';
import type { ControlRequest } from '../control/control-request.ts';
import { openRun } from '../runtime/run-handle.ts';
import type { RunStore } from '../store/store.ts';
import type { ToolContext } from '../tools/tool.ts';

export interface FollowedControl {
  /** Runs the child: a stop because the parent's pause reached it is the parent's own pause. */
  during<T>(work: () => Promise<T>): Promise<T>;
  stop(): void;
}

export function followParentControl(ctx: ToolContext, child: RunStore): FollowedControl {
  const onAbort = () => {
    const reason: unknown = ctx.signal.reason;
    if (reason instanceof ControlRequestedError && reason.request.kind === 'cancel') {
      const why = `its parent run ${ctx.runId} was cancelled${reason.request.reason ? ` (${reason.request.reason})` : ''}`;
      // Into the inbox first: a child whose journal is not made yet takes it at its first step.
      void (child.control?.write({ kind: 'cancel', by: reason.request.by, reason: why, at: Date.now() }) ?? Promise.resolve())
        .then(() => openRun({ store: child }).cancel({ by: reason.request.by, reason: why }))
        .catch(() => {});
    }
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const parentInbox = ctx.caller?.store.control;
  const childInbox = child.control;
  let relayed: ControlRequest | null = null;
  let looking = false;
  const timer =
    parentInbox && childInbox
      ? setInterval(() => {
          if (looking || relayed) return;
          looking = true;
          parentInbox
            .read()
            .then(async (requests) => {
              const pause = requests.find((request) => request.kind === 'pause');
              if (!pause || relayed) return;
              relayed = pause;
              await childInbox.write({ ...pause, at: Date.now() });
            })
            // A passing read failure: the next look tries again.
            .catch(() => {})
            .finally(() => (looking = false));
        }, CONTROL_POLL_MS)
      : null;
  timer?.unref();
  return {
    async during(work) {
      try {
        return await work();
      } catch (error) {
        if (error instanceof RunPausedError && relayed) throw new RunPausedError(relayed);
        throw error;
      }
    },
    stop() {
      if (timer) clearInterval(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    },
  };
}
