/**
 * The agents module the serve tests give `serve --agents` and `worker --agents`: a billing agent
 * (and `careful`, the same asking a person before each invoice) whose model is a real model name (the SDK talks to the fake Messages API), whose send_invoice
 * appends a line to outbox.txt in the process's directory (what the tests count), verified by its
 * idempotency key. Written inside the package, so that `import … from 'durable-agent'` is this
 * checkout's build.
 */
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/cli.ts';

export function writeAgentsModule(name: string): string {
  const scratch = path.join(REPO, '.tmp');
  fs.mkdirSync(scratch, { recursive: true });
  const file = path.join(scratch, `${name}-${process.pid}.mjs`);
  fs.writeFileSync(
    file,
    `import fs from 'node:fs';
import { defineAgent, defineTool } from 'durable-agent';
const sendInvoice = defineTool({
  name: 'send_invoice', description: 'Send an invoice.', readOnly: false,
  inputSchema: { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'] },
  run: async ({ customer }, ctx) => { fs.appendFileSync('outbox.txt', customer + ' ' + ctx.idempotencyKey + '\\n'); return 'invoice sent to ' + customer; },
  verify: (_, ctx) => ({ happened: fs.existsSync('outbox.txt') && fs.readFileSync('outbox.txt', 'utf8').includes(ctx.idempotencyKey) }),
});
export const billing = defineAgent({ name: 'billing', model: 'claude-sonnet-5-5', system: 'You send invoices.', tools: [sendInvoice], maxTurns: 10 });
export const careful = defineAgent({ name: 'careful', model: 'claude-sonnet-5-5', system: 'You send invoices.', tools: [sendInvoice], maxTurns: 10, requireApproval: ['send_invoice'] });
`,
  );
  return file;
}
