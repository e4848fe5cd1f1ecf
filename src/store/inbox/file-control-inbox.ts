/**
 * The file store's control inbox: DIR/.durable-agent/control/<kind>.json (cancel.json,
 * pause.json), a keyed file inbox (keyed-file-inbox.ts) as the decisions are: a second request
 * of the same kind is refused, not written over, and a process killed at any instant leaves no
 * request or a whole one. The run's writer reads it at every step boundary: one stat when empty.
 */
import type { ValueSealer } from '../../seal/value-codec.ts';
import type { InboxContent } from './inbox-content.ts';
import { CONTROL_KINDS, type ControlInbox, type ControlKind, type ControlRequest, controlProblem } from './inboxes.ts';
import { type InboxKind, KeyedFileInbox } from './keyed-file-inbox.ts';

export const CONTROL_DIR = 'control';

/** Test-only: where a request's write may be stopped, to check what a kill there leaves. */
export type ControlPoint = 'control-temp' | 'control-link';
export const CONTROL_POINTS: readonly ControlPoint[] = ['control-temp', 'control-link'];

const REQUESTS: InboxKind<ControlRequest> = {
  dir: CONTROL_DIR,
  format: 'durable-agent/control',
  field: 'request',
  words: (kind) => `${kind} request`,
  plural: 'control requests',
  checkKey(key) {
    if (!CONTROL_KINDS.includes(key as ControlKind)) throw new RangeError(`${JSON.stringify(key)} is not a control request's kind (${CONTROL_KINDS.join(', ')})`);
  },
  keyOf: (request) => request.kind,
  entryOf(value, kind) {
    const problem = controlProblem(value, kind as ControlKind);
    return problem === null ? (value as ControlRequest) : { problem };
  },
  faultPoint: 'control-write',
  // Why a run is cancelled is a person's words, as the journal's cancellation keeps them.
  contentFields: ['reason'],
  // One request of a kind at a time, but a kind again after the last one was settled: its time too.
  placeOf: (request) => `inbox/control/${request.kind}@${request.at}`,
};

export interface FileControlInboxOptions {
  /** Test-only: called as the write passes a point (a test kills the process there). */
  onPoint?: ((point: ControlPoint) => void) | undefined;
  /** Test-only: the write fails half-way with ENOSPC when this returns true (a full disk). */
  failWrite?: (() => boolean) | undefined;
  /** The run's sealing: a sealed run's requests are sealed (see inbox-content.ts). */
  content?: InboxContent | undefined;
}

export class FileControlInbox implements ControlInbox {
  private readonly inbox: KeyedFileInbox<ControlRequest>;

  constructor(stateDir: string, options: FileControlInboxOptions = {}) {
    const { onPoint, failWrite, content } = options;
    this.inbox = new KeyedFileInbox(stateDir, REQUESTS, { failWrite, content, onPoint: onPoint && ((point) => onPoint(`control-${point}`)) });
  }

  get dir(): string {
    return this.inbox.dir;
  }

  fileOf(kind: ControlKind): string {
    return this.inbox.fileOf(kind);
  }

  async write(request: ControlRequest): Promise<'written' | 'exists'> {
    return this.inbox.put(request);
  }

  async read(): Promise<ControlRequest[]> {
    const there = this.inbox.keys();
    const requests: ControlRequest[] = [];
    for (const kind of CONTROL_KINDS) {
      if (!there.includes(kind)) continue;
      const request = this.get(kind);
      if (request) requests.push(request);
    }
    return requests;
  }

  /** The request of this kind; null when there is none or it is not a whole one (a hand-made file). */
  get(kind: ControlKind): ControlRequest | null {
    const found = this.inbox.get(kind);
    return found && 'entry' in found ? found.entry : null;
  }

  /** Seals the requests written plain, for a run being sealed in under its lock (see KeyedFileInbox.sealPlainEntries). */
  sealPlainEntries(sealer: ValueSealer): number {
    return this.inbox.sealPlainEntries(sealer);
  }

  async settle(kind: ControlKind): Promise<void> {
    this.inbox.remove(kind);
  }
}
