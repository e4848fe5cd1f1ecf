/**
 * A run as XState's inspection API sees an actor, so that any inspector (`createSkyInspector()
 * .inspect` from @statelyai/inspect, a browser inspector, a logger, a test) can watch it. The run is not an XState actor (the driver computes each snapshot with the pure
 * `transition()` and persists it before any effect), so the events are made here, shaped as
 * XState's own: `@xstate.actor` when a process takes the run up, then `@xstate.event` and
 * `@xstate.snapshot` for every transition the driver takes, once it is saved (REOPEN, when a
 * process takes the run up with settings of its own, among them; MODEL_USAGE taken in place).
 */
import type { ActorRefLike, AnyEventObject, AnyStateMachine, InspectionEvent, Observer, Snapshot } from 'xstate';
import { describeThrown } from '../tools/recordable.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** What `createActor(machine, { inspect })` takes. */
export type RunInspector = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** The run as an inspector reads an actor: XState's ActorRefLike, plus what @statelyai/inspect looks at. */
export interface InspectedRun extends ActorRefLike {
  /** The run id. */
  readonly id: string;
  /** The machine, whose `config` an inspector draws. */
  readonly logic: AnyStateMachine;
  readonly src: AnyStateMachine;
  readonly _parent: undefined;
}

/** Thrown by `send()` on the inspected run: the run takes its events from its driver only. */
export class InspectedRunSendError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'InspectedRunSendError';
  constructor(readonly eventType: string) {
    super(
      `Cannot send ${eventType} to a durable-agent run: its events come from its driver (model replies, tool outcomes), ` +
        'each persisted before the next effect. Watch the run through the inspector; drive it with startRun/resumeRun.',
    );
  }
}

export class RunInspection {
  private observer: Observer<InspectionEvent> | null;
  private readonly actorRef: InspectedRun;

  /**
   * @param sessionId one per process that drives the run (the run id and the record it went on from).
   */
  constructor(
    inspector: RunInspector | undefined,
    runId: string,
    sessionId: string,
    machine: AnyStateMachine,
    private readonly current: () => Snapshot<unknown>,
  ) {
    this.observer = inspector === undefined ? null : typeof inspector === 'function' ? { next: inspector } : inspector;
    this.actorRef = {
      id: runId,
      sessionId,
      logic: machine,
      src: machine,
      _parent: undefined,
      getSnapshot: () => current(),
      send: (event: AnyEventObject) => {
        throw new InspectedRunSendError(event.type);
      },
    };
  }

  /** A process took the run up (started it, or resumed it as of its current snapshot). */
  started(input: unknown): void {
    if (!this.observer) return;
    this.send({ type: '@xstate.actor', actorRef: this.actorRef, rootId: this.actorRef.sessionId });
    this.took({ type: 'xstate.init', input });
  }

  /** The driver took `event` and saved the snapshot it led to. */
  took(event: AnyEventObject): void {
    if (!this.observer) return;
    const rootId = this.actorRef.sessionId;
    this.send({ type: '@xstate.event', actorRef: this.actorRef, rootId, sourceRef: undefined, event });
    this.send({ type: '@xstate.snapshot', actorRef: this.actorRef, rootId, event, snapshot: this.current() });
  }

  /**
   * An inspector that throws is detached (with a process warning) rather than allowed to stop a
   * run between its saved transition and the effect that follows.
   */
  private send(event: InspectionEvent): void {
    const observer = this.observer;
    if (!observer?.next) return;
    try {
      observer.next(event);
    } catch (error) {
      this.observer = null;
      process.emitWarning(`The run's inspector threw (${describeThrown(error)}) and was detached; the run goes on.`, { code: 'DURABLE_AGENT_INSPECTOR' });
    }
  }
}
