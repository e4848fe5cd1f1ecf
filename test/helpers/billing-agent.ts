/**
 * The fleet's sealed tests' agent: one side effect (send_invoice, which records the idempotency
 * key it ran under in `sent`), then an answer for each turn asked of it. Its task and its
 * customer's name are what a sealed database must not show.
 */
import { defineAgent, defineTool } from '../../src/index.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';

export const BILLING_TASK = 'Invoice ACME Widgets Ltd for 120 EUR.';
export const BILLING_ANSWER = 'Invoiced ACME Widgets Ltd.';

export function billingAgent(sent: string[], laterAnswers: string[] = []) {
  return defineAgent({
    name: 'billing',
    model: scriptedModel(
      [
        () => toolUseReply([{ id: 'toolu_1', name: 'send_invoice', input: { customer: 'ACME Widgets Ltd' } }]),
        () => endTurnReply(BILLING_ANSWER),
        ...laterAnswers.map((answer) => () => endTurnReply(answer)),
      ],
      { name: 'scripted-billing' },
    ),
    system: 'You send invoices.',
    tools: [
      defineTool<{ customer: string }>({
        name: 'send_invoice',
        description: 'Send an invoice.',
        inputSchema: { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'] },
        readOnly: false,
        run: ({ customer }, ctx) => {
          sent.push(ctx.idempotencyKey);
          return `invoice sent to ${customer}`;
        },
      }),
    ],
  });
}
