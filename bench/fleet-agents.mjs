// The agents module bench:fleet's workers load (`durable-agent worker --agents bench/fleet-agents.mjs`):
// a user's agent, not the demo. Ten turns a run: nine tool turns that alternate a read-only lookup
// and a side effect that appends a line under the call's idempotency key to this process's
// outbox file (in FLEET_BENCH_OUTBOX; verify() looks for the key in every worker's file), then
// the answer. The model is scripted and answers at once: what is timed is the fleet, not a model
// nor a file system (one file per effect would cost the worker more than its records do here).
import fs from 'node:fs';
import path from 'node:path';
import { defineAgent, defineTool } from 'durable-agent';
import { endTurnReply, scriptedModel, toolUseReply } from 'durable-agent/testing';

const outbox = process.env.FLEET_BENCH_OUTBOX ?? path.join(process.cwd(), 'fleet-bench-outbox');
fs.mkdirSync(outbox, { recursive: true });
const shipments = fs.openSync(path.join(outbox, `shipments-${process.pid}.log`), 'a');

/** Whether a line of any worker's outbox names this key. */
function shipped(key) {
  return fs.readdirSync(outbox).some((file) => fs.readFileSync(path.join(outbox, file), 'utf8').includes(`${key} `));
}

export const TOOL_TURNS = 9;

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Look an order up by its number.',
  inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
  readOnly: true,
  run: ({ order }) => `order ${order}: 3 items, paid`,
});

const recordShipment = defineTool({
  name: 'record_shipment',
  description: 'Record that an order was shipped.',
  inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
  readOnly: false,
  run: ({ order }, ctx) => {
    fs.writeSync(shipments, `${ctx.idempotencyKey} ${order} shipped\n`);
    return `shipment of ${order} recorded`;
  },
  verify: (_input, ctx) => ({ happened: shipped(ctx.idempotencyKey) }),
});

const orderOf = (messages) => /order (\S+)/.exec(typeof messages[0].content === 'string' ? messages[0].content : '')?.[1] ?? 'none';

const steps = [
  ...Array.from({ length: TOOL_TURNS }, (_, turn) => (messages) =>
    toolUseReply([{ id: `toolu_${turn}`, name: turn % 2 === 0 ? 'lookup_order' : 'record_shipment', input: { order: orderOf(messages) } }]),
  ),
  (messages) => endTurnReply(`Order ${orderOf(messages)} handled.`),
];

export const shipping = defineAgent({
  name: 'shipping',
  model: scriptedModel(steps, { name: 'scripted-shipping' }),
  system: 'You handle orders.',
  tools: [lookupOrder, recordShipment],
});
