/**
 * Carries out the reconcile plan of a resumed open turn (src/reconcile/reconcile.ts) in the run's session:
 * each call's outcome is recorded like any other ledger entry, with a note saying which rule
 * settled it. The calls are settled by the tool scheduler's rule (runInOrder): read-only re-runs
 * side by side up to toolConcurrency, each recorded as it finishes (outcomes that finish together
 * share a write); a call with a side effect (verified, or re-run as idempotent) alone, in the
 * model's order. Reuses and unknown states run nothing and are recorded at once.
 */
import { effectiveCall } from '../../machines/agent-loop.logic.ts';
import type { PendingCall } from '../../machines/agent-loop.types.ts';
import { planReconcile, type ReconcileDecision, type ToolTraits, type UnknownWhy, unknownWhyWords } from '../reconcile/reconcile.ts';
import type { ReconcileOutcomeName, RecordNote } from '../store/journal/journal-record.ts';
import { outcome, verifyCall } from '../tools/execute-call.ts';
import { readOnlyFor } from '../tools/tool.ts';
import type { DriverSession } from './run-session.ts';
import { type Finished, type Job, mayOverlap, runInOrder } from './tool-scheduler.ts';

/** Which rule settled a call, and where the trait it rests on came from. */
type Ruling = Pick<ReconcileDecision, 'rule' | 'basis'>;

/**
 * Settles the open calls of the turn a resume found open. `changedTools`: tools whose contract
 * changed since the run started (allowed by the user), why, by name: their calls are not run.
 */
export async function reconcileOpenTurn(session: DriverSession, changedTools: ReadonlyMap<string, string>): Promise<void> {
  // The closing checkpoint B of this turn is the one that fills it in after the resume.
  session.writer.closingResumedTurn = true;
  const { pending, decisions } = session.context();
  const traitsOf = (name: string, call: PendingCall): ToolTraits | undefined => {
    const tool = session.registry.get(name);
    if (!tool) return undefined;
    const { idempotent, traitSources: sources } = tool;
    // The input a person approved, if edited: the one that would run.
    const readOnly = readOnlyFor(tool, effectiveCall(session.context(), call).input);
    return { readOnly, idempotent, canVerify: typeof tool.verify === 'function', changed: changedTools.get(name), sources };
  };
  // Outcomes already in the turn's results (recorded in completion order, not the model's) are not
  // open: recording the others can close the turn before the loop reaches them.
  const recorded = new Set(session.context().results.map((outcome) => outcome.tool_use_id));
  const jobs = planReconcile(pending, session.writer.durable.ledger, traitsOf, decisions).map((decision) => jobOf(session, decision, recorded));
  await runInOrder(jobs, { limit: session.toolConcurrency, record: (group, othersRunning) => session.record(group, othersRunning) }, null);
}

/** How a call was settled, as the events say it. */
function report(session: DriverSession, call: PendingCall, decision: ReconcileOutcomeName, detail: string | null, { rule, basis }: Ruling): void {
  session.emit({ type: 'reconciled', call: session.callView(call), decision, detail, rule, basis });
}

/** A re-run of a call that may overlap others runs beside them; a side effect (verify, idempotent re-run) runs alone. */
function jobOf(session: DriverSession, decision: ReconcileDecision, recorded: ReadonlySet<string>): Job {
  const { call } = decision;
  const runs = decision.kind === 'verify' || decision.kind === 'rerun';
  return { call, overlaps: !runs || (decision.kind === 'rerun' && mayOverlap(session.registry, effectiveCall(session.context(), call))), finish: () => carryOut(session, decision, recorded) };
}

async function carryOut(session: DriverSession, decision: ReconcileDecision, recorded: ReadonlySet<string>): Promise<Finished | null> {
  const { call } = decision;
  const ruling: Ruling = { rule: decision.rule, basis: decision.basis };
  const say = (name: ReconcileOutcomeName, detail: string | null) => report(session, call, name, detail, ruling);
  switch (decision.kind) {
    case 'reuse':
      say('reused', null);
      if (!recorded.has(call.id)) return { call, outcome: decision.outcome, note: noteOf(call, 'reused', ruling) };
      session.writer.noteReuse(noteOf(call, 'reused', ruling).reconcile!);
      return null;
    case 'rerun': {
      const rerun = decision.rule === 'idempotent' ? 're-ran-idempotent' : 're-ran-read-only';
      say(rerun, null);
      return { call, outcome: await session.runCall(call), note: noteOf(call, rerun, ruling) };
    }
    case 'verify': {
      const verdict = await verifyCall(session.registry, session.runId, effectiveCall(session.context(), call), session.toolTimeoutMs);
      if ('cannotTell' in verdict) return reportUnknown(session, call, { kind: 'cannot-tell', what: verdict.cannotTell }, ruling);
      if (verdict.answer.happened) {
        say('verified-done', null);
        const content = verdict.answer.result ?? session.words.verifiedDone(call.name);
        return { call, outcome: outcome(call, 'verified', content, false), note: noteOf(call, 'verified-done', ruling) };
      }
      say('verified-not-done-ran', null);
      return { call, outcome: await session.runCall(call), note: noteOf(call, 'verified-not-done-ran', ruling) };
    }
    case 'report-unknown':
      return reportUnknown(session, call, decision.why, ruling);
  }
}

/** The model is told the call's state is unknown, in the run's words; the event says why in the same words. */
function reportUnknown(session: DriverSession, call: PendingCall, why: UnknownWhy, ruling: Ruling): Finished {
  const { words } = session;
  const because = unknownWhyWords(call, why, words);
  report(session, call, 'unknown-reported', because, ruling);
  return { call, outcome: outcome(call, 'unknown', words.unknownState(call.name, call.id, because), true), note: noteOf(call, 'unknown-reported', ruling) };
}

function noteOf(call: PendingCall, decision: ReconcileOutcomeName, { rule, basis }: Ruling): RecordNote {
  return { reconcile: { tool_use_id: call.id, name: call.name, decision, ...(rule ? { rule } : {}), ...(basis ? { basis } : {}) } };
}
