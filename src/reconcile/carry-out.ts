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
import { planReconcile, type ReconcileDecision, unknownStateMessage } from './reconcile.ts';

/** What the carry-out needs of the driver. */
export interface ReconcileHost {
  readonly runId: string;
  readonly registry: ToolRegistry;
  readonly toolTimeoutMs: number;
  readonly ledger: ReadonlyMap<string, ToolOutcome>;
  context(): AgentContext;
  /** Records the call's outcome (the ledger write), with the note. */
  record(call: PendingCall, result: ToolOutcome, note: RecordNote): Promise<unknown>;
  /** Runs the call now (the tool's effect), returning its outcome. */
  run(call: PendingCall): Promise<ToolOutcome>;
  /** A ledger hit already in the turn's results: nothing to write, noted on the next record. */
  noteReuse(note: ReconcileNote): void;
  report(call: PendingCall, decision: ReconcileOutcomeName, detail: string | null): void;
}

export async function reconcileOpenTurn(host: ReconcileHost): Promise<void> {
  const { pending, decisions } = host.context();
  const traitsOf = (name: string) => {
    const tool = host.registry.get(name);
    return tool ? { readOnly: tool.readOnly, canVerify: typeof tool.verify === 'function' } : undefined;
  };
  for (const decision of planReconcile(pending, host.ledger, traitsOf, decisions)) await carryOut(host, decision);
}

async function carryOut(host: ReconcileHost, decision: ReconcileDecision): Promise<void> {
  const { call } = decision;
  switch (decision.kind) {
    case 'reuse':
      host.report(call, 'reused', null);
      if (!host.context().results.some((o) => o.tool_use_id === call.id)) {
        await host.record(call, decision.outcome, noteOf(call, 'reused'));
      } else {
        host.noteReuse({ tool_use_id: call.id, name: call.name, decision: 'reused' });
      }
      return;
    case 'rerun':
      host.report(call, 're-ran-read-only', null);
      await host.record(call, await host.run(call), noteOf(call, 're-ran-read-only'));
      return;
    case 'verify': {
      const verdict = await verifyCall(host.registry, host.runId, effectiveCall(host.context(), call), host.toolTimeoutMs);
      if ('cannotTell' in verdict) {
        await reportUnknown(host, call, `${verdict.cannotTell}, and no result was recorded for it`);
      } else if (verdict.answer.happened) {
        host.report(call, 'verified-done', null);
        const content =
          verdict.answer.result ?? `${call.name} had already taken effect before the resume (confirmed by checking); it was not run again.`;
        await host.record(call, outcome(call, 'verified', content, false), noteOf(call, 'verified-done'));
      } else {
        host.report(call, 'verified-not-done-ran', null);
        await host.record(call, await host.run(call), noteOf(call, 'verified-not-done-ran'));
      }
      return;
    }
    case 'report-unknown':
      await reportUnknown(host, call, decision.why);
      return;
  }
}

async function reportUnknown(host: ReconcileHost, call: PendingCall, why: string): Promise<void> {
  host.report(call, 'unknown-reported', why);
  await host.record(call, outcome(call, 'unknown', unknownStateMessage(call, why), true), noteOf(call, 'unknown-reported'));
}

function noteOf(call: PendingCall, decision: ReconcileOutcomeName): RecordNote {
  return { reconcile: { tool_use_id: call.id, name: call.name, decision } };
}
