/**
 * Carries out the reconcile plan of a resumed open turn (see reconcile.ts) through the driver:
 * each call's outcome is recorded like any other ledger entry, with a note saying which rule
 * settled it.
 */
import { effectiveCall } from '../../machines/agent-loop.logic.ts';
import type { AgentContext, PendingCall, ToolOutcome } from '../../machines/agent-loop.types.ts';
import type { ReconcileNote, ReconcileOutcomeName, RecordNote } from '../store/journal-record.ts';
import { outcome, verifyCall } from '../tools/execute-call.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import { planReconcile, type ReconcileDecision, type ToolTraits, unknownStateMessage } from './reconcile.ts';

/** What the carry-out needs of the driver. */
export interface ReconcileHost {
  readonly runId: string;
  readonly registry: ToolRegistry;
  readonly toolTimeoutMs: number;
  readonly ledger: ReadonlyMap<string, ToolOutcome>;
  /** Tools whose contract changed since the run started (allowed by the user): why, by name. */
  readonly changedTools: ReadonlyMap<string, string>;
  context(): AgentContext;
  /** Records the call's outcome (the ledger write), with the note. */
  record(call: PendingCall, result: ToolOutcome, note: RecordNote): Promise<unknown>;
  /** Runs the call now (the tool's effect), returning its outcome. */
  run(call: PendingCall): Promise<ToolOutcome>;
  /** A ledger hit already in the turn's results: nothing to write, noted on the next record. */
  noteReuse(note: ReconcileNote): void;
  report(call: PendingCall, decision: ReconcileOutcomeName, detail: string | null, ruling: Ruling): void;
}

/** Which rule settled a call, and where the trait it rests on came from. */
type Ruling = Pick<ReconcileDecision, 'rule' | 'basis'>;

export async function reconcileOpenTurn(host: ReconcileHost): Promise<void> {
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
  for (const decision of planReconcile(pending, host.ledger, traitsOf, decisions)) await carryOut(host, decision, recorded);
}

async function carryOut(host: ReconcileHost, decision: ReconcileDecision, recorded: ReadonlySet<string>): Promise<void> {
  const { call } = decision;
  const ruling: Ruling = { rule: decision.rule, basis: decision.basis };
  const report = (name: ReconcileOutcomeName, detail: string | null) => host.report(call, name, detail, ruling);
  switch (decision.kind) {
    case 'reuse':
      report('reused', null);
      if (!recorded.has(call.id)) {
        await host.record(call, decision.outcome, noteOf(call, 'reused', ruling));
      } else {
        host.noteReuse(noteOf(call, 'reused', ruling).reconcile!);
      }
      return;
    case 'rerun': {
      const rerun = decision.rule === 'idempotent' ? 're-ran-idempotent' : 're-ran-read-only';
      report(rerun, null);
      await host.record(call, await host.run(call), noteOf(call, rerun, ruling));
      return;
    }
    case 'verify': {
      const verdict = await verifyCall(host.registry, host.runId, effectiveCall(host.context(), call), host.toolTimeoutMs);
      if ('cannotTell' in verdict) {
        await reportUnknown(host, call, `${verdict.cannotTell}, and no result was recorded for it`, ruling);
      } else if (verdict.answer.happened) {
        report('verified-done', null);
        const content =
          verdict.answer.result ?? `${call.name} had already taken effect before the resume (confirmed by checking); it was not run again.`;
        await host.record(call, outcome(call, 'verified', content, false), noteOf(call, 'verified-done', ruling));
      } else {
        report('verified-not-done-ran', null);
        await host.record(call, await host.run(call), noteOf(call, 'verified-not-done-ran', ruling));
      }
      return;
    }
    case 'report-unknown':
      await reportUnknown(host, call, decision.why, ruling);
      return;
  }
}

async function reportUnknown(host: ReconcileHost, call: PendingCall, why: string, ruling: Ruling): Promise<void> {
  host.report(call, 'unknown-reported', why, ruling);
  await host.record(call, outcome(call, 'unknown', unknownStateMessage(call, why), true), noteOf(call, 'unknown-reported', ruling));
}

function noteOf(call: PendingCall, decision: ReconcileOutcomeName, { rule, basis }: Ruling): RecordNote {
  return { reconcile: { tool_use_id: call.id, name: call.name, decision, ...(rule ? { rule } : {}), ...(basis ? { basis } : {}) } };
}
