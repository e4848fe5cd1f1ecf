/**
 * `durable-agent run --agents FILE` as a user runs it: the agents module of the docs, as printed,
 * with a real model name, the real @anthropic-ai/sdk talking HTTP to a fake Messages API on
 * 127.0.0.1. Killed by a real SIGKILL after its side effect (from outside, and at a crash point),
 * resumed: the invoice is sent once. The run is read by its id (status, history, viz, fork), a run
 * waiting for approval is listed by `pending` with no --run, and what is refused is refused before
 * anything runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { openStore } from '../../src/store/open-store.ts';
import { BIN, REPO, runCliAsync, startCli } from '../helpers/cli.ts';
import { assistantTurns, type FakeAnswer, FakeAnthropic, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { docsAgentsModule } from '../helpers/readme-example.ts';
import { tmuxPresent } from '../helpers/system-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { TmuxPane } from '../helpers/tmux.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-sonnet-5-5';
const TASK = 'Invoice ACME for 120 EUR.';
const USAGE = { input: 60, output: 20, cacheRead: 0, cacheWrite: 0 };
const EDITORS = path.join(REPO, 'test', 'fixtures', 'agents', 'editor-agents.mjs');

/** The docs' module, written inside the package so that `import … from 'durable-agent'` resolves to this checkout's build. */
const MODULE = (() => {
  const scratch = path.join(REPO, '.tmp');
  fs.mkdirSync(scratch, { recursive: true });
  const file = path.join(scratch, `docs-agents-${process.pid}.mjs`);
  fs.writeFileSync(file, docsAgentsModule());
  return file;
})();
afterAll(() => fs.rmSync(MODULE, { force: true }));

/** The invoice the task asks for, then the answer: the reply is chosen by where the conversation stands. */
function billingReply(request: ReceivedRequest): FakeAnswer {
  const [, customer = 'nobody', amount = '0'] = /Invoice (\w+) for (\d+)/.exec(JSON.stringify(request.body.messages[0]!.content)) ?? [];
  const reply = assistantTurns(request) === 0 ? toolUseReply([{ id: 'toolu_01', name: 'send_invoice', input: { customer, amount: Number(amount) } }]) : endTurnReply('Invoice sent.');
  return { reply: { ...reply, usage: USAGE } };
}

const billingApi = () => new FakeAnthropic(billingReply);

async function withApi<T>(server: FakeAnthropic, body: (env: Record<string, string>) => Promise<T>): Promise<T> {
  const url = await server.start();
  try {
    return await body({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url });
  } finally {
    await server.stop();
  }
}

/** The invoices the agent's tool sent: the lines of outbox.txt in the directory it ran in. */
function invoices(dir: string): string[] {
  const file = path.join(dir, 'outbox.txt');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** Every file under the run's state folder, with its bytes: what a refused command must leave as it was. */
function stateFiles(dir: string): Record<string, string> {
  const root = path.join(dir, '.durable-agent');
  if (!fs.existsSync(root)) return {};
  const files: Record<string, string> = {};
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files[path.relative(root, path.join(entry.parentPath, entry.name))] = fs.readFileSync(path.join(entry.parentPath, entry.name), 'base64');
  }
  return files;
}

const run = (args: string[], cwd: string, env: Record<string, string | undefined> = {}) => runCliAsync(['run', '--agents', MODULE, ...args], { cwd, env });

describe('run --agents: your own agent from the command line', () => {
  it('the docs module with a real model name, SIGKILLed from outside after the invoice went out, resumed: one invoice; status, history, viz and fork read it by its id', async () => {
    const cwd = tempDir();
    // The second model call never answers: the kill lands after the invoice, wherever the run is by then.
    const server = new FakeAnthropic((request) => (assistantTurns(request) === 0 ? billingReply(request) : { hang: true }));
    await withApi(server, async (env) => {
      const first = startCli(['run', '--agents', MODULE, '--agent', 'billing', '--task', TASK, '--run', 'invoice-acme', '--plain'], { cwd, env });
      await vi.waitFor(() => expect(invoices(cwd), 'the invoice went out').toHaveLength(1), { timeout: 60_000, interval: 20 });
      first.child.kill('SIGKILL');
      const killed = await first.done;
      expect(killed.signal).toBe('SIGKILL');
      expect(server.requests.map((request) => request.body.model)[0]).toBe(MODEL);

      server.respondWith(billingReply);
      const resumed = await run(['--resume', '--run', 'invoice-acme', '--plain'], cwd, env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toMatch(/^\[resume\] read turn=1 /m);
      expect(resumed.stdout).toContain('[done] Invoice sent.');
      expect(invoices(cwd)).toHaveLength(1);
      expect(server.requests.every((request) => request.body.model === MODEL)).toBe(true);
      expect(server.requests.at(-1)!.body.system).toBe('You send invoices with send_invoice.');

      // The same start again attaches to the finished run: nothing asked, nothing sent.
      const asked = server.requests.length;
      const again = await run(['--task', TASK, '--run', 'invoice-acme', '--plain'], cwd, env);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('[done] Invoice sent.');
      expect(server.requests).toHaveLength(asked);
      expect(invoices(cwd)).toHaveLength(1);
    });

    const status = await runCliAsync(['status', '--run', 'invoice-acme'], { cwd });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^state +done$/m);
    expect(status.stdout).toMatch(/^ledger +1 entry$/m);
    const history = await runCliAsync(['history', '--run', 'invoice-acme'], { cwd });
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(/resumed by pid \d+ after record \d+/);
    for (const bytes of Object.values(stateFiles(cwd))) expect(Buffer.from(bytes, 'base64').toString('latin1')).not.toContain(KEY);
    const { header } = await openStore({ dir: path.join(cwd, '.durable-agent'), runId: 'invoice-acme' }).load();
    expect(header).toMatchObject({ agent: { name: 'billing' }, startedBy: { command: 'run', model: MODEL, agentsModule: MODULE } });

    const viz = await runCliAsync(['viz', '--run', 'invoice-acme'], { cwd });
    expect(viz.code, viz.stderr).toBe(0);
    const page = path.join(cwd, '.durable-agent', 'viz-invoice-acme.html');
    expect(viz.stdout).toMatch(new RegExp(`^\\[viz\\] wrote ${page}: \\d+ records of run invoice-acme \\(done, 2 processes, 1 stopped and resumed\\)$`, 'm'));
    expect(fs.readFileSync(page, 'utf8')).toContain('durable-agent · run invoice-acme');

    const to = path.join(tempDir(), 'again');
    const fork = await runCliAsync(['fork', '--run', 'invoice-acme', '--at', '1', '--to', to], { cwd });
    expect(fork.code, fork.stderr).toBe(0);
    expect(fork.stdout).toMatch(new RegExp(`^resume the new run: .*durable-agent run --resume --agents ${MODULE} --agent billing --dir ${to}$`, 'm'));
  });

  it('without --run: a new id, printed with the command that resumes it; killed at a crash point after the invoice, that command finishes it, one invoice', async () => {
    const cwd = tempDir();
    await withApi(billingApi(), async (env) => {
      const killed = await run(['--task', TASK, '--plain'], cwd, { ...env, CRASH_AFTER: 'after-effect-write:1' });
      expect(killed.code, killed.stderr).toBe(137);
      const printed = /^\[run\] a new run of the agent billing: (billing-[0-9a-f]{8}); resume it with: (.*)$/m.exec(killed.stdout);
      expect(printed, killed.stdout).not.toBeNull();
      const [, runId, command] = printed!;
      expect(command).toMatch(new RegExp(`durable-agent run --resume --agents ${MODULE} --agent billing --run ${runId}$`));
      expect(invoices(cwd)).toHaveLength(1);

      // The printed command, pasted (its words after the command's name: nothing in it is quoted).
      expect(command).not.toContain("'");
      const words = command!.slice(command!.indexOf('durable-agent run ') + 'durable-agent '.length).split(' ');
      const resumed = await runCliAsync([...words, '--plain'], { cwd, env });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('[resume][reconcile] tool_use_id=toolu_01 name=send_invoice ledger hit, reusing result, not re-running');
      expect(resumed.stdout).toContain('[done] Invoice sent.');
      expect(invoices(cwd)).toHaveLength(1);
      const list = await runCliAsync(['list'], { cwd });
      expect(list.stdout).toMatch(new RegExp(`^${runId} +done +Invoice ACME for 120 EUR\\. `, 'm'));
    });
  });

  it('--model runs another model than the agent names, for the whole run: its resume, given no --model, goes on with it', async () => {
    const cwd = tempDir();
    const server = billingApi();
    await withApi(server, async (env) => {
      const killed = await run(['--task', TASK, '--run', 'opus', '--model', 'claude-opus-5-5', '--plain'], cwd, { ...env, CRASH_AFTER: 'after-effect-write:1' });
      expect(killed.code, killed.stderr).toBe(137);
      expect(killed.stdout).not.toContain('[run] a new run');
      const resumed = await run(['--resume', '--run', 'opus', '--plain'], cwd, env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(server.requests.map((request) => request.body.model)).toEqual(['claude-opus-5-5', 'claude-opus-5-5']);
      expect(invoices(cwd)).toHaveLength(1);
    });
  });

  it('pending with no --run lists the call a run by id waits on, with the commands that decide it; approved and resumed, it is sent once', async () => {
    const cwd = tempDir();
    await withApi(billingApi(), async (env) => {
      const done = await run(['--task', 'Invoice BETA for 80 EUR.', '--run', 'invoice-beta', '--plain'], cwd, env);
      expect(done.code, done.stderr).toBe(0);
      const waiting = await run(['--task', TASK, '--run', 'invoice-acme', '--require-approval', 'send_invoice', '--no-wait', '--plain'], cwd, env);
      expect(waiting.code, waiting.stderr).toBe(7);
      expect(waiting.stdout).toContain('[approval] toolu_01 send_invoice waits for a decision');
      expect(invoices(cwd)).toHaveLength(1);

      const pending = await runCliAsync(['pending'], { cwd });
      expect(pending.code, pending.stderr).toBe(0);
      expect(pending.stdout).toMatch(/^run +call +tool +waits for +since +state +input$/m);
      expect(pending.stdout).toMatch(/^invoice-acme +toolu_01 +send_invoice +approval +\S+ \(.+ ago\) +the run waits on it +\{"customer":"ACME","amount":120\}$/m);
      expect(pending.stdout).not.toContain('invoice-beta');
      expect(pending.stdout).toMatch(/^ {2}approve: .*durable-agent approve --run invoice-acme toolu_01$/m);
      const json = JSON.parse((await runCliAsync(['pending', '--json'], { cwd })).stdout);
      expect(json).toMatchObject([{ run: 'invoice-acme', tool_use_id: 'toolu_01', name: 'send_invoice', needs: 'approval', given: null }]);

      const approved = await runCliAsync(['approve', '--run', 'invoice-acme', 'toolu_01', '--by', 'ana'], { cwd });
      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toContain(`durable-agent run --resume --agents ${MODULE} --agent billing --run invoice-acme`);
      const resumed = await run(['--resume', '--run', 'invoice-acme', '--plain'], cwd, env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('[decided] toolu_01 send_invoice approved by ana');
      expect(invoices(cwd)).toHaveLength(2);
      expect(invoices(cwd).filter((line) => line.startsWith('invoice ACME 120 '))).toHaveLength(1);
      const none = await runCliAsync(['pending'], { cwd });
      expect(none.stdout.trim()).toBe(`Nothing waits for a decision in the 2 runs of ${cwd}.`);
    });
  });

  it("pending with no --run in a folder with a run of its own and runs by id: both runs' calls, the folder's own first and decided without --run", async () => {
    const cwd = tempDir();
    const demo = await runCliAsync(['demo', '--require-approval', 'write_report', '--no-wait'], { cwd });
    expect(demo.code, demo.stderr).toBe(7);
    await withApi(billingApi(), async (env) => {
      const waiting = await run(['--task', TASK, '--run', 'invoice-acme', '--require-approval', 'send_invoice', '--no-wait', '--plain'], cwd, env);
      expect(waiting.code, waiting.stderr).toBe(7);
    });
    const pending = await runCliAsync(['pending'], { cwd });
    expect(pending.code, pending.stderr).toBe(0);
    const rows = pending.stdout.split('\n').slice(1, 3);
    expect(rows[0]).toMatch(/^\(the folder's own\) +toolu_03 +write_report +approval /);
    expect(rows[1]).toMatch(/^invoice-acme +toolu_01 +send_invoice +approval /);
    expect(pending.stdout).toMatch(/^ {2}approve: .*durable-agent approve toolu_03$/m);
    const json = JSON.parse((await runCliAsync(['pending', '--json'], { cwd })).stdout);
    expect(json.map((call: { run: string | null; tool_use_id: string }) => [call.run, call.tool_use_id])).toEqual([
      [null, 'toolu_03'],
      ['invoice-acme', 'toolu_01'],
    ]);
    // --run names one run of the folder, as ever.
    const one = await runCliAsync(['pending', '--run', 'invoice-acme'], { cwd });
    expect(one.stdout).toMatch(/^call +tool +waits for/);
    expect(one.stdout).not.toContain('write_report');
  });

  it('refuses, exit 2, before anything runs or is written: no --task, an unknown agent, several without --agent, a run of another agent or of none, the file tools on an agent run, no key', async () => {
    const cwd = tempDir();
    const refused = async (args: string[], message: string | RegExp, env: Record<string, string | undefined> = {}) => {
      const before = stateFiles(cwd);
      const result = await runCliAsync(args, { cwd, env });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
      expect(stateFiles(cwd)).toEqual(before);
    };
    await refused(['run', '--agents', MODULE], 'run needs --task "what to do" (or --resume to go on with a stored run).');
    await refused(['run', '--agents', MODULE, '--agent', 'shipping', '--task', TASK], `--agents ${MODULE}: it has no agent named shipping (its agents: billing). Nothing was run.`);
    await refused(['run', '--agents', EDITORS, '--task', TASK], `${EDITORS} exports 2 agents (editor, writer): say which with --agent NAME.`);
    await refused(['run', '--agents', path.join(cwd, 'missing.mjs'), '--task', TASK], /there is no such file/);
    await refused(['run', '--agent', 'billing', '--task', TASK], '--agent NAME picks an agent of the module --agents FILE names: give --agents FILE too.');
    await refused(['run', '--agents', MODULE, '--tools', 'bash', '--task', TASK], "--tools is not for --agents: the agent's definition gives its tools.");
    await refused(['run', '--agents', MODULE, '--resume'], /run --agents --resume needs --run ID/);
    await refused(['run', '--agents', MODULE, '--task', TASK, '--run', 'x'], /The model claude-sonnet-5-5 talks to the Anthropic API and needs ANTHROPIC_API_KEY .* Set it and run the same command again\./);
    // Refused by the run itself (no tool of that name): no new run is announced. Nothing listens on port 9.
    await refused(['run', '--agents', MODULE, '--task', TASK, '--require-approval', 'send_mail'], /send_mail/, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' });

    // A run by id the writer agent started (its model is scripted: no key), then others ask for it.
    const writer = await runCliAsync(['run', '--agents', EDITORS, '--agent', 'writer', '--task', 'note A', '--run', 'notes', '--plain'], { cwd, env: { EDITOR_NOTES: path.join(cwd, 'notes') } });
    expect(writer.code, writer.stderr).toBe(0);
    await refused(['run', '--agents', EDITORS, '--agent', 'editor', '--task', 'note A', '--run', 'notes'], /The run in \S+notes was started with the agent writer, not editor\. Nothing was run\./);
    await refused(['run', '--resume', '--run', 'notes'], `was started with the agent writer: it goes on only with that agent, loaded from its module. Nothing was run. Resume it with: `);
    const demo = await runCliAsync(['demo', '--run', 'report'], { cwd });
    expect(demo.code, demo.stderr).toBe(0);
    await refused(['run', '--agents', EDITORS, '--agent', 'writer', '--task', 'note B', '--run', 'report'], /The run in \S+report was started by `durable-agent demo` without an agent, not by the agent writer\. Nothing was run\./);
  });
});

describe.skipIf(!tmuxPresent())('run --agents in a terminal', () => {
  it('shows the live view, the new run and its resume command above it, and ends on the done line', async () => {
    const cwd = tempDir();
    await withApi(billingApi(), async (env) => {
      const pane = await TmuxPane.start({ cwd, argv: [process.execPath, BIN, 'run', '--agents', MODULE, '--task', TASK], env, columns: 120, rows: 40 });
      try {
        expect(await pane.exitStatus()).toBe(0);
        const screen = await pane.screen();
        expect(screen).toMatch(/^\[run\] a new run of the agent billing: billing-[0-9a-f]{8}; resume it with: /);
        expect(screen).toContain('[done] Invoice sent.');
        expect(screen).toMatch(new RegExp(`durable-agent · ${MODEL} · run billing-[0-9a-f]{8}`));
        expect(screen).toMatch(/now\s+✔ done · after 1 turn/);
        expect(invoices(cwd)).toHaveLength(1);
      } finally {
        await pane.close();
      }
    });
  });
});
