/**
 * The fifth kind of await, a fleet's only: a sub-agent call waits for the child run it queued
 * (needs 'child'). A child queue exists only in a fleet (da_runs on PostgreSQL), so these kinds
 * are not in AWAIT_KINDS (every store's) and the file store has no such path. The world acts as a
 * fleet worker would: it drives the queued child run to its end and delivers that end to the
 * caller's decisions (deliverChildEnd), or loses the delivery (a worker killed between the two),
 * and the caller's next process reads the child's end from the child itself.
 */
import { defineAgent } from '../../src/agent/agent-definition.ts';
import type { WaitingCall } from '../../src/core/run-events.ts';
import { deliverChildEnd, fleetChildRuns } from '../../src/fleet/child-runs.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { childRunIdOf } from '../../src/runtime/run-tree.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { PgRunStore } from '../../src/store/pg/pg-store.ts';
import { subagentTool } from '../../src/subagent/subagent-tool.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { pool } from '../helpers/use-postgres.ts';
import type { World } from '../model-based/scenario-runner.ts';
import type { AwaitFleet, AwaitKind, Outside } from '../model-based/walks/await-kinds.ts';

/** The child's one call: its side effect, which must take place once whatever kill the caller met. */
export const CHILD_NOTE = 'c1_note';
const CHILD_AGENT = 'writer';

/** The child: one note written (counted in the world), then its answer. */
function writer(world: World) {
  const writeNote = defineTool<{ text: string }>({
    name: 'write_note',
    description: 'Write a note.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    readOnly: false,
    run: ({ text }, ctx) => {
      world.attempts.record(ctx.toolUseId, ctx.idempotencyKey);
      world.effects.record(ctx.toolUseId, ctx.idempotencyKey);
      return `wrote ${text}`;
    },
  });
  return defineAgent({
    name: CHILD_AGENT,
    model: scriptedModel([toolUseReply([{ id: CHILD_NOTE, name: 'write_note', input: { text: 'the note' } }]), endTurnReply('the note is written')], { name: 'scripted-writer' }),
    tools: [writeNote],
  });
}

const fleet = (delivered: boolean): AwaitFleet => ({
  partsOf: (runId, world) => ({ tools: [subagentTool(writer(world))], childRuns: fleetChildRuns(pool, runId) }),
  queued: async (runId) => (await pool.query<{ id: string }>(`SELECT id FROM da_runs WHERE starts_with(id, $1) ORDER BY id`, [`${runId}.`])).rows.map((row) => row.id),
  childEffects: [CHILD_NOTE],
  delivered,
});

/** As a fleet worker: drives the queued child run to its end, then delivers that end to the caller (or, `lost`, does not). */
const driveChild = (delivery: 'delivered' | 'lost') => async (outside: Outside, call: WaitingCall) => {
  const childRunId = childRunIdOf(outside.key, call.tool_use_id);
  const calledBy = { runId: outside.key, toolUseId: call.tool_use_id };
  const result = await startRun({ agent: writer(outside.world), store: new PgRunStore(pool, childRunId), task: String((call.input as { task: string }).task), runId: childRunId, calledBy, command: 'subagent' });
  if (result.status !== 'done') throw new Error(`the child run ${childRunId} ended ${result.status}, not done`);
  const end = { state: result.status, text: result.text ?? null, failure: null };
  if (delivery === 'lost') {
    outside.gave({ call: call.tool_use_id, by: 'child', childRunId, end, delivered: null });
    return;
  }
  if (!(await deliverChildEnd(pool, { runId: childRunId, agent: CHILD_AGENT, calledBy }, result))) throw new Error(`the end of ${childRunId} was not delivered`);
  const delivered = ((await outside.store.decisions?.read()) ?? []).find((decision) => decision.tool_use_id === call.tool_use_id) ?? null;
  outside.gave({ call: call.tool_use_id, by: 'child', childRunId, end, delivered });
};

const CALL = { id: 't1_child', name: CHILD_AGENT, input: { task: 'note A' }, needs: 'child' } as const;

export const CHILD_AWAIT_KINDS: readonly AwaitKind[] = [
  { name: 'child run, its end delivered', calls: [CALL], verdict: 'answered', endedBy: 'child', waitsInProcess: false, give: driveChild('delivered'), fleet: fleet(true) },
  { name: 'child run, its delivery lost (read from the child)', calls: [CALL], verdict: 'answered', endedBy: 'child', waitsInProcess: false, give: driveChild('lost'), fleet: fleet(false) },
];
