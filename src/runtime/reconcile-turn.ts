/**
 * Carries out the reconcile plan of a resumed open turn (see reconcile.ts) through the driver:
 * each call's outcome is recorded like any other ledger entry, with a note saying which rule
 * settled it. The calls are settled by the tool scheduler's rule (runInOrder): read-only re-runs
 * side by side up to toolConcurrency, each recorded as it finishes (outcomes that finish together
 * share a write); a call with a side effect (verified, or re-run as idempotent) alone, in the
 * model's order. Reuses and unknown states run nothing and are recorded at once.
 */
import { effectiveCall } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, PendingCall, ToolOutcome } from '../../machines/agent-loop.types.ts';
import { type Finished, type Job, mayOverlap, type RecordGroup, runInOrder } from './tool-scheduler.ts';
import type { ReconcileNote, ReconcileOutcomeName, RecordNote } from '../store/journal-record.ts';
import { outcome, verifyCall } from '../tools/execute-call.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import type { DriverSession } from './run-session.ts';
import { planReconcile, type ReconcileDecision, type ToolTraits, unknownStateMessage } from '../reconcile/reconcile.ts';

/** Which rule settled a call, and where the trait it rests on came from. */
type Ruling = Pick<ReconcileDecision, 'rule' | 'basis'>;

/**
 * Settles the open calls of the turn a resume found open. `changedTools`: tools whose contract
 * changed since the run started (allowed by the user), why, by name: their calls are not run.
 */
export async function reconcileOpenTurn(session: DriverSession, changedTools: ReadonlyMap<string, string>): Promise<void> {
  const host = hostOf(session, changedTools);
  const { pending, decisions } = host.context();
  const traitsOf = (name: string): ToolTraits | undefined => {
    const tool = host.registry.get(name);
    if (!tool) return undefined;
    const { readOnly, idempotent, traitSources: sources } = tool;
    return { readOnly, idempotent, canVerify: typeof tool.verify === 'function', changed: host.changedTools.get(name), sources };
  };
  // Outcomes already in the turn's results (recorded in completion order, not the model's) are not
  // open: recording the others can close the turn before the loop reaches them.
  const recorded = new Set(host.context().results.map((outcome) => outcome.tool_use_id));
  const jobs = planReconcile(pending, host.ledger, traitsOf, decisions).map((decision) => jobOf(host, decision, recorded));
  await runInOrder(jobs, { limit: host.toolConcurrency, record: host.record }, null);
}

/** What the carry-out needs of the run. */
interface ReconcileHost {
  readonly runId: string;
  readonly registry: ToolRegistry;
  readonly toolTimeoutMs: number;
  readonly toolConcurrency: number;
  readonly ledger: ReadonlyMap<string, ToolOutcome>;
  readonly changedTools: ReadonlyMap<string, string>;
  context(): AgentContext;
  readonly record: RecordGroup;
  run(call: PendingCall): Promise<ToolOutcome>;
  /** A ledger hit already in the turn's results: nothing to write, noted on the next record. */
  noteReuse(note: ReconcileNote): void;
  report(call: PendingCall, decision: ReconcileOutcomeName, detail: string | null, ruling: Ruling): void;
}

function hostOf(session: DriverSession, changedTools: ReadonlyMap<string, string>): ReconcileHost {
  const { registry, toolTimeoutMs, toolConcurrency } = session.parts;
  // The closing checkpoint B of this turn is the one that fills it in after the resume.
  session.writer.closingResumedTurn = true;
  return {
    runId: session.runId,
    registry,
    toolTimeoutMs,
    toolConcurrency,
    ledger: session.writer.durable.ledger,
    changedTools,
    context: () => session.context(),
    record: (group, othersRunning) => session.record(group, othersRunning),
    run: (call) => session.runCall(call),
    noteReuse: (note) => session.writer.noteReuse(note),
    report: (call, decision, detail, { rule, basis }) => session.emit({ type: 'reconciled', call: session.callView(call), decision, detail, rule, basis }),
  };
}

/** A re-run of a call that may overlap others runs beside them; a side effect (verify, idempotent re-run) runs alone. */
function jobOf(host: ReconcileHost, decision: ReconcileDecision, recorded: ReadonlySet<string>): Job {
  const { call } = decision;
  const runs = decision.kind === 'verify' || decision.kind === 'rerun';
  return { call, overlaps: !runs || (decision.kind === 'rerun' && mayOverlap(host.registry, call)), finish: () => carryOut(host, decision, recorded) };
}

async function carryOut(host: ReconcileHost, decision: ReconcileDecision, recorded: ReadonlySet<string>): Promise<Finished | null> {
  const { call } = decision;
  const ruling: Ruling = { rule: decision.rule, basis: decision.basis };
  const report = (name: ReconcileOutcomeName, detail: string | null) => host.report(call, name, detail, ruling);
  switch (decision.kind) {
    case 'reuse':
      report('reused', null);
      if (!recorded.has(call.id)) return { call, outcome: decision.outcome, note: noteOf(call, 'reused', ruling) };
      host.noteReuse(noteOf(call, 'reused', ruling).reconcile!);
      return null;
    case 'rerun': {
      const rerun = decision.rule === 'idempotent' ? 're-ran-idempotent' : 're-ran-read-only';
      report(rerun, null);
      return { call, outcome: await host.run(call), note: noteOf(call, rerun, ruling) };
    }
    case 'verify': {
      const verdict = await verifyCall(host.registry, host.runId, effectiveCall(host.context(), call), host.toolTimeoutMs);
      if ('cannotTell' in verdict) return reportUnknown(host, call, `${verdict.cannotTell}, and no result was recorded for it`, ruling);
      if (verdict.answer.happened) {
        report('verified-done', null);
        const content =
          verdict.answer.result ?? `${call.name} had already taken effect before the resume (confirmed by checking); it was not run again.`;
        return { call, outcome: outcome(call, 'verified', content, false), note: noteOf(call, 'verified-done', ruling) };
      }
      report('verified-not-done-ran', null);
      return { call, outcome: await host.run(call), note: noteOf(call, 'verified-not-done-ran', ruling) };
    }
    case 'report-unknown':
      return reportUnknown(host, call, decision.why, ruling);
  }
}

function reportUnknown(host: ReconcileHost, call: PendingCall, why: string, ruling: Ruling): Finished {
  host.report(call, 'unknown-reported', why, ruling);
  return { call, outcome: outcome(call, 'unknown', unknownStateMessage(call, why), true), note: noteOf(call, 'unknown-reported', ruling) };
}

function noteOf(call: PendingCall, decision: ReconcileOutcomeName, { rule, basis }: Ruling): RecordNote {
  return { reconcile: { tool_use_id: call.id, name: call.name, decision, ...(rule ? { rule } : {}), ...(basis ? { basis } : {}) } };
}
