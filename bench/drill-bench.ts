/**
 * npm run bench:drill: how long the crash drill of a 10-turn agent takes — every crash point of
 * its path played, killed there (simulated) and resumed, with real files and fsyncs, the tools
 * running for real in scratch folders — against the target of 60 s on this machine. The agent
 * has three tools: read-only, a side effect with verify(), a side effect without; each of its 10
 * turns calls one of them. A wall-clock figure printed, not a test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineAgent } from '../src/agent/agent-definition.ts';
import { drillAgent } from '../src/drill/drill.ts';
import { scriptReplies } from '../src/drill/drill-script.ts';
import { defineTool } from '../src/tools/tool.ts';

const TURNS = 10;
const TARGET_SECONDS = 60;
let scratch = '';
const keysIn = (file: string) => (fs.existsSync(path.join(scratch, file)) ? fs.readFileSync(path.join(scratch, file), 'utf8').split('\n') : []);

const agent = defineAgent({
  name: 'bench-billing',
  model: 'claude-sonnet-5-5',
  tools: [
    defineTool<{ account: string }>({ name: 'read_balance', description: 'Read a balance.', inputSchema: { type: 'object', properties: { account: { type: 'string' } } }, readOnly: true, run: ({ account }) => `${account}: 120 EUR` }),
    defineTool<{ to: string }>({
      name: 'send_invoice',
      description: 'Send an invoice.',
      inputSchema: { type: 'object', properties: { to: { type: 'string' } } },
      readOnly: false,
      run: ({ to }, ctx) => {
        fs.appendFileSync(path.join(scratch, 'invoices'), `${ctx.idempotencyKey}\n`);
        return `sent to ${to}`;
      },
      verify: (_input, ctx) => ({ happened: keysIn('invoices').includes(ctx.idempotencyKey) }),
    }),
    defineTool<{ amount: number }>({
      name: 'charge_card',
      description: 'Charge a card.',
      inputSchema: { type: 'object', properties: { amount: { type: 'number' } } },
      readOnly: false,
      run: ({ amount }, ctx) => {
        fs.appendFileSync(path.join(scratch, 'charges'), `${ctx.idempotencyKey}\n`);
        return `charged ${amount}`;
      },
    }),
  ],
});

const names = ['read_balance', 'send_invoice', 'charge_card'] as const;
const inputs = { read_balance: { account: 'acme' }, send_invoice: { to: 'acme' }, charge_card: { amount: 5 } };
const script = [
  ...Array.from({ length: TURNS }, (_, turn) => {
    const name = names[turn % names.length]!;
    return { stop_reason: 'tool_use', content: [{ type: 'tool_use', id: `toolu_${turn + 1}`, name, input: inputs[name] }] };
  }),
  { stop_reason: 'end_turn', content: [{ type: 'text', text: 'Done.' }] },
];

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-drill-'));
try {
  const report = await drillAgent({
    agent,
    replies: scriptReplies(script, 'the bench script'),
    scratchRoot: root,
    setup: ({ dir }) => {
      scratch = dir;
    },
  });
  const perPoint = (report.seconds / report.points.length) * 1000;
  console.log(`node ${process.version}, ${os.cpus().length} cores; load average ${os.loadavg()[0]!.toFixed(1)}`);
  console.log(`Drill of a ${TURNS}-turn agent (3 tools, one call a turn; real files, fsync on): ${report.points.length} crash points in ${report.seconds.toFixed(1)} s (${perPoint.toFixed(0)} ms a point: play, kill, resume)`);
  console.log(`${report.seconds <= TARGET_SECONDS ? '[met]   ' : '[missed]'} the drill of a ${TURNS}-turn agent within ${TARGET_SECONDS} s: ${report.seconds.toFixed(1)} s`);
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
