/**
 * Carries out the reconcile plan of a resumed open turn (src/reconcile/reconcile.ts) with what it uses of the run (ReconcileParts):
 * each call's outcome is recorded like any other ledger entry, with a note saying which rule
 * settled it. The calls are settled by the tool scheduler's rule (runInOrder): read-only re-runs
 * side by side up to toolConcurrency, each recorded as it finishes (outcomes that finish together
 * share a write); a call with a side effect (verified, or re-run as idempotent) alone, in the
 * model's order. Reuses and unknown states run nothing and are recorded at once.
 */
import { effectiveCall } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, PendingCall, ToolOutcome } from '../../machines/agent-loop.types.ts';
import type { CallView, RunEvent } from '../core/run-events.ts';
import type { LessonWords } from '../lang/lesson-words.ts';
import { planReconcile, type ReconcileDecision, type ToolTraits, type UnknownWhy, unknownWhyWords } from '../reconcile/reconcile.ts';
import type { DurableView } from '../store/journal/journal-codec.ts';
import type { ReconcileNote, ReconcileOutcomeName, RecordNote } from '../store/journal/journal-record.ts';
import { outcome, type Verdict } from '../tools/execute-call.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { readOnlyFor } from '../tools/tool.ts';
import { type Finished, type Job, mayOverlap, type RecordGroup, runInOrder } from './tool-scheduler.ts';

/** What the reconcile of an open turn uses of the run: its tools, its ledger, its words, and ways to run or verify a call and record outcomes. */
export interface ReconcileParts {
  readonly registry: ToolRegistry;
  /** What the run says to the model itself (an unknown state, a verified call), in its language. */
  readonly words: LessonWords;
  /** How many read-only re-runs may run at once. */
  readonly toolConcurrency: number;
  /** The run's context as it stands now (each recorded outcome changes it). */
  context(): AgentContext;
  /** The ledger the journal holds. */
  durable(): DurableView;
  emit(event: RunEvent): void;
  callView(call: PendingCall): CallView;
  /** Runs a call (the tool's effect) as the tool turn would. */
  runCall(call: PendingCall): Promise<ToolOutcome>;
  /** Asks the call's tool whether the call took effect (its `verify`), with the run's timeout. */
  verifyCall(call: PendingCall): Promise<Verdict>;
  readonly record: RecordGroup;
  /** Notes a call reused whose outcome the turn's results hold already (it goes in the next record's note). */
  noteReuse(note: ReconcileNote): void;
  /** The closing checkpoint B of this turn is the one that fills it in after the resume. */
  closesResumedTurn(): void;
}

/** Which rule settled a call, and where the trait it rests on came from. */
type Ruling = Pick<ReconcileDecision, 'rule' | 'basis'>;

/**
 * Settles the open calls of the turn a resume found open. `changedTools`: tools whose contract
 * changed since the run started (allowed by the user), why, by name: their calls are not run.
 */
export async function reconcileOpenTurn(parts: ReconcileParts, changedTools: ReadonlyMap<string, string>): Promise<void> {
  parts.closesResumedTurn();
  const context = parts.context();
  // Each call as it would run (the input a person approved, if edited), worked out once: settling the turn records outcomes, never decisions.
  const ran = new Map(context.pending.map((call) => [call.id, effectiveCall(context, call)]));
  const traitsOf = (name: string, call: PendingCall): ToolTraits | undefined => {
    const tool = parts.registry.get(name);
    if (!tool) return undefined;
    const { idempotent, traitSources: sources } = tool;
    return { readOnly: readOnlyFor(tool, ran.get(call.id)!.input), idempotent, canVerify: typeof tool.verify === 'function', changed: changedTools.get(name), sources };
  };
  // Outcomes already in the turn's results (recorded in completion order, not the model's) are not
  // open: recording the others can close the turn before the loop reaches them.
  const recorded = new Set(context.results.map((outcome) => outcome.tool_use_id));
  const jobs = planReconcile(context.pending, parts.durable().ledger, traitsOf, context.decisions).map((decision) => jobOf(parts, decision, ran.get(decision.call.id)!, recorded));
  await runInOrder(jobs, { limit: parts.toolConcurrency, record: parts.record }, null);
}

/** How a call was settled, as the events say it. */
function report(parts: ReconcileParts, call: PendingCall, decision: ReconcileOutcomeName, detail: string | null, { rule, basis }: Ruling): void {
  parts.emit({ type: 'reconciled', call: parts.callView(call), decision, detail, rule, basis });
}

/**
 * A re-run of a call that may overlap others runs beside them; a side effect (verify, idempotent
 * re-run) runs alone. `ran`: the call as it would run.
 */
function jobOf(parts: ReconcileParts, decision: ReconcileDecision, ran: PendingCall, recorded: ReadonlySet<string>): Job {
  const { call } = decision;
  const runs = decision.kind === 'verify' || decision.kind === 'rerun';
  return { call, overlaps: !runs || (decision.kind === 'rerun' && mayOverlap(parts.registry, ran)), finish: () => carryOut(parts, decision, ran, recorded) };
}

async function carryOut(parts: ReconcileParts, decision: ReconcileDecision, ran: PendingCall, recorded: ReadonlySet<string>): Promise<Finished | null> {
  const { call } = decision;
  const ruling: Ruling = { rule: decision.rule, basis: decision.basis };
  const say = (name: ReconcileOutcomeName, detail: string | null) => report(parts, call, name, detail, ruling);
  switch (decision.kind) {
    case 'reuse':
      say('reused', null);
      if (!recorded.has(call.id)) return { call, outcome: decision.outcome, note: noteOf(call, 'reused', ruling) };
      parts.noteReuse(noteOf(call, 'reused', ruling).reconcile!);
      return null;
    case 'rerun': {
      const rerun = decision.rule === 'idempotent' ? 're-ran-idempotent' : 're-ran-read-only';
      say(rerun, null);
      return { call, outcome: await parts.runCall(call), note: noteOf(call, rerun, ruling) };
    }
    case 'verify': {
      const verdict = await parts.verifyCall(ran);
      if ('cannotTell' in verdict) return reportUnknown(parts, call, { kind: 'cannot-tell', what: verdict.cannotTell }, ruling);
      if (verdict.answer.happened) {
        say('verified-done', null);
        const content = verdict.answer.result ?? parts.words.verifiedDone(call.name);
        return { call, outcome: outcome(call, 'verified', content, false), note: noteOf(call, 'verified-done', ruling) };
      }
      say('verified-not-done-ran', null);
      return { call, outcome: await parts.runCall(call), note: noteOf(call, 'verified-not-done-ran', ruling) };
    }
    case 'report-unknown':
      return reportUnknown(parts, call, decision.why, ruling);
  }
}

/** The model is told the call's state is unknown, in the run's words; the event says why in the same words. */
function reportUnknown(parts: ReconcileParts, call: PendingCall, why: UnknownWhy, ruling: Ruling): Finished {
  const { words } = parts;
  const because = unknownWhyWords(call, why, words);
  report(parts, call, 'unknown-reported', because, ruling);
  return { call, outcome: outcome(call, 'unknown', words.unknownState(call.name, call.id, because), true), note: noteOf(call, 'unknown-reported', ruling) };
}

function noteOf(call: PendingCall, decision: ReconcileOutcomeName, { rule, basis }: Ruling): RecordNote {
  return { reconcile: { tool_use_id: call.id, name: call.name, decision, ...(rule ? { rule } : {}), ...(basis ? { basis } : {}) } };
}
