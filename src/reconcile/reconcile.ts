/**
 * What to do, on resume, with each call of the turn that was open when the process died. Pure:
 * it looks at the ledger and the tools and decides; the runtime carries the decisions out.
 *
 * - ledger hit: the call finished and its outcome is recorded: reuse it, never run it again;
 * - miss, read-only tool: running it again is harmless: run and record;
 * - miss, idempotent tool: the same call again has no further effect: run and record;
 * - miss, side-effecting tool that can verify: ask it whether the effect happened;
 * - miss, side-effecting tool that cannot: the state is unknown; tell the model so with an
 *   is_error tool_result rather than guess (running it again could do the effect twice).
 * A tool that is gone, or whose contract (input schema, annotations) changed since the call was
 * made, is never called for it: the call's state is reported as unknown.
 *
 * A call that needs a decision and has none cannot have run (its decision comes first), and
 * calls run in order, so neither it nor any call after it has started: the plan stops there and
 * leaves them open, and the run goes on to wait for the decision. An approved call follows the
 * rules above; a denied or answered one has its outcome in the ledger already.
 */
import { awaitsDecision } from '../../machines/agent-loop.logic.ts';
import type { Decision, PendingCall, ToolOutcome } from '../../machines/agent-loop.types.ts';
import type { LessonWords } from '../lang/lesson-words.ts';
import type { ReconcileRule } from '../store/journal/journal-record.ts';

export interface ToolTraits {
  readOnly: boolean;
  /** Absent: false. */
  idempotent?: boolean | undefined;
  canVerify: boolean;
  /** Set when the tool's contract changed since the run started: why, in words. */
  changed?: string | null | undefined;
  /** Where each trait came from, for the record of the decision. */
  sources?: { readOnly?: string | undefined; idempotent?: string | undefined; verify?: string | undefined } | undefined;
}

/** Which rule decided, and where the trait it rests on came from (null: the tool's own definition). */
interface Ruling {
  rule: ReconcileRule;
  basis: string | null;
}

export type ReconcileDecision =
  | ({ kind: 'reuse'; call: PendingCall; outcome: ToolOutcome } & Ruling)
  | ({ kind: 'rerun'; call: PendingCall } & Ruling)
  | ({ kind: 'verify'; call: PendingCall } & Ruling)
  | ({ kind: 'report-unknown'; call: PendingCall; why: UnknownWhy } & Ruling);

/** Why a call's state is unknown, as facts: said in the run's language when the model is told (unknownStateMessage). */
export type UnknownWhy =
  | { kind: 'no-record' }
  | { kind: 'tool-gone' }
  | { kind: 'tool-changed'; change: string }
  | { kind: 'cannot-tell'; what: string };

export function planReconcile(
  pending: readonly PendingCall[],
  ledger: ReadonlyMap<string, ToolOutcome>,
  /** The call is given too: a tool may be read-only for some input only (readOnlyWhen). */
  traitsOf: (toolName: string, call: PendingCall) => ToolTraits | undefined,
  decisions: readonly Decision[] = [],
): ReconcileDecision[] {
  const firstUndecided = pending.findIndex((call) => !ledger.has(call.id) && awaitsDecision({ decisions }, call));
  const settled = firstUndecided === -1 ? pending : pending.slice(0, firstUndecided);
  return settled.map((call): ReconcileDecision => {
    const recorded = ledger.get(call.id);
    if (recorded) return { kind: 'reuse', call, outcome: recorded, rule: 'ledger-hit', basis: null };
    const traits = traitsOf(call.name, call);
    if (!traits) {
      return { kind: 'report-unknown', call, why: { kind: 'tool-gone' }, rule: 'tool-gone', basis: null };
    }
    if (traits.changed) return { kind: 'report-unknown', call, why: { kind: 'tool-changed', change: traits.changed }, rule: 'tool-changed', basis: null };
    const sources = traits.sources ?? {};
    if (traits.readOnly) return { kind: 'rerun', call, rule: 'read-only', basis: sources.readOnly ?? null };
    if (traits.idempotent) return { kind: 'rerun', call, rule: 'idempotent', basis: sources.idempotent ?? null };
    if (traits.canVerify) return { kind: 'verify', call, rule: 'verify', basis: sources.verify ?? null };
    const basis = [sources.readOnly, sources.idempotent, sources.verify].filter(Boolean).join('; ') || null;
    return { kind: 'report-unknown', call, why: { kind: 'no-record' }, rule: 'no-verify', basis };
  });
}

/** Why a call's state is unknown, in words. */
export function unknownWhyWords(call: PendingCall, why: UnknownWhy, words: LessonWords): string {
  switch (why.kind) {
    case 'no-record':
      return words.unknownWhy.noRecord;
    case 'tool-gone':
      return words.unknownWhy.toolGone(call.name);
    case 'tool-changed':
      return words.unknownWhy.toolChanged(call.name, why.change);
    case 'cannot-tell':
      return words.unknownWhy.cannotTell(why.what);
  }
}
