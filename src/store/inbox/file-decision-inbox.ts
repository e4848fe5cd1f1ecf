/**
 * The file store's inbox of decisions: `DIR/.durable-agent/decisions/<tool_use_id>.json`, a
 * keyed file inbox (keyed-file-inbox.ts). A decision given from another process (approve, deny,
 * answer) is written here, and the run's writer turns it into a DECISION record; it removes the
 * file only once that record is durable, so a file for a call that is already decided is one a
 * writer died before removing, and is ignored.
 *
 * A tool_use_id becomes a file name, so it is checked first: the API's ids are `toolu_…`, and
 * anything with other characters (a path separator, a dot) is refused before any path is made.
 */
import { isToolUseId } from '../../../machines/agent-loop.logic.ts';
import type { Decision } from '../../../machines/agent-loop.types.ts';
import { DECISION_FIELDS } from '../../seal/content-fields.ts';
import type { ValueSealer } from '../../seal/value-codec.ts';
import type { InboxContent } from './inbox-content.ts';
import { BadCallIdError, DecisionExistsError, InboxFileError } from './inbox-errors.ts';
import { type DecisionInbox, decisionProblem } from './inboxes.ts';
import { type InboxKind, KeyedFileInbox } from './keyed-file-inbox.ts';

export const DECISIONS_DIR = 'decisions';

/** Test-only: where a decision's write may be stopped, to check what a kill there leaves. */
export type InboxPoint = 'decision-temp' | 'decision-link';

export { BadCallIdError, DecisionExistsError, InboxFileError } from './inbox-errors.ts';


const DECISIONS: InboxKind<Decision> = {
  dir: DECISIONS_DIR,
  format: 'durable-agent/decision',
  field: 'decision',
  words: () => 'decision',
  plural: 'decisions',
  checkKey(key) {
    if (!isToolUseId(key)) throw new BadCallIdError(String(key));
  },
  keyOf: (decision) => decision.tool_use_id,
  entryOf(value, key) {
    const problem = decisionProblem(value, key);
    return problem === null ? (value as Decision) : { problem };
  },
  faultPoint: 'decision-write',
  // What the journal seals of a decision (a note, a reason, an edited input, an answer) is sealed here too.
  contentFields: Object.entries(DECISION_FIELDS)
    .filter(([, kind]) => kind === 'content')
    .map(([field]) => field),
  // A call is decided once: its id is the place.
  placeOf: (decision) => `inbox/decision/${decision.tool_use_id}`,
};

export interface FileDecisionInboxOptions {
  /** Test-only: called as the write passes a point (a test kills the process there). */
  onPoint?: ((point: InboxPoint) => void) | undefined;
  /** Test-only: the write fails half-way with ENOSPC when this returns true (a full disk). */
  failWrite?: (() => boolean) | undefined;
  /** The run's sealing: a sealed run's decisions are sealed (see inbox-content.ts). */
  content?: InboxContent | undefined;
}

export class FileDecisionInbox implements DecisionInbox {
  private readonly inbox: KeyedFileInbox<Decision>;

  /** `stateDir` is the run's DIR/.durable-agent. */
  constructor(stateDir: string, options: FileDecisionInboxOptions = {}) {
    const { onPoint, failWrite, content } = options;
    this.inbox = new KeyedFileInbox(stateDir, DECISIONS, { failWrite, content, onPoint: onPoint && ((point) => onPoint(`decision-${point}`)) });
  }

  get dir(): string {
    return this.inbox.dir;
  }

  fileOf(tool_use_id: string): string {
    return this.inbox.fileOf(tool_use_id);
  }

  /** Writes the decision whole and exclusively, durable when it resolves: 'exists' (nothing written) when the call has one already. */
  async write(decision: Decision): Promise<'written' | 'exists'> {
    return this.inbox.put(decision);
  }

  /** Every decision in the inbox, oldest first; a file that is not a whole decision is left out (get() says what is wrong with it). */
  async read(): Promise<Decision[]> {
    return this.list({ skipDamaged: true });
  }

  /** Removes the call's decision once its DECISION record is durable. */
  async settle(tool_use_id: string): Promise<void> {
    this.inbox.remove(tool_use_id);
  }

  /** write(), throwing DecisionExistsError when the call has a decision already. */
  async put(decision: Decision): Promise<void> {
    if ((await this.inbox.put(decision)) === 'exists') throw new DecisionExistsError(decision.tool_use_id, this.fileOf(decision.tool_use_id));
  }

  /** The decision waiting for this call, or null; InboxFileError for a file that is not a whole decision. */
  async get(tool_use_id: string): Promise<Decision | null> {
    const found = this.inbox.get(tool_use_id);
    if (found && 'problem' in found) throw new InboxFileError(found.file, found.problem);
    return found ? found.entry : null;
  }

  unreadable(tool_use_id: string): { file: string; problem: string } | null {
    const found = this.inbox.get(tool_use_id);
    return found && 'problem' in found ? { file: found.file, problem: found.problem } : null;
  }

  /** Every decision in the inbox, oldest first. Temporary files (a write cut short) are not decisions. */
  async list(options: { skipDamaged?: boolean } = {}): Promise<Decision[]> {
    const decisions: Decision[] = [];
    for (const id of this.inbox.keys()) {
      const found = this.inbox.get(id);
      if (found && 'problem' in found && !options.skipDamaged) throw new InboxFileError(found.file, found.problem);
      if (found && 'entry' in found) decisions.push(found.entry);
    }
    return decisions.sort((a, b) => a.at - b.at);
  }

  /** Seals the decisions written plain, for a run being sealed in under its lock (see KeyedFileInbox.sealPlainEntries). */
  sealPlainEntries(sealer: ValueSealer): number {
    return this.inbox.sealPlainEntries(sealer);
  }

  /** Removes the call's decision durably (the writer does it once the DECISION record is durable, or for a call already decided). */
  async remove(tool_use_id: string): Promise<void> {
    this.inbox.remove(tool_use_id);
  }
}
