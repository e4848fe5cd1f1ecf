/** The README's promises, checked: its commands exist and its code example runs as printed. */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { cliEnv, REPO } from '../helpers/cli.ts';
import { freePort } from '../helpers/free-port.ts';
import { EXAMPLE_DONE_OUTPUT, readmeInstall, readmeProgrammaticExample, readmeWebhookReceiver } from '../helpers/readme-example.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { signWebhookRequest } from '../../src/fleet/webhook-signature.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { CrashPoints, endTurnReply, MemoryStore, scriptedModel, toolUseReply } from '../../src/testing.ts';

const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');

describe('README', () => {
  it('is short, and its first section is the install (test/package/readme-install.test.ts runs it as printed)', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme.match(/^## .*$/m)?.[0]).toBe('## Install');
    const [checkout, project] = readmeInstall();
    expect(checkout).toBe('npm ci && npm run pack -- ../my-agent');
    expect(project).toMatch(/^cd \.\.\/my-agent && .*npm install \.\/durable-agent-\d+\.\d+\.\d+\.tgz$/);
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
    expect(project).toContain(`./durable-agent-${pkg.version}.tgz`);
    // Nothing keeps the package from being published: the tarball is what is published.
    expect(pkg.private).toBeUndefined();
  });

  it('starts with the install-and-run command and the test command, for a checkout', () => {
    // The README's first code block: what a fresh machine with Node and npm runs first.
    const block = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
    const commands = block.trim().split('\n').map((line) => line.split('#')[0]!.trim());
    expect(commands).toEqual(['npm ci && npx durable-agent demo --dir demo-run', 'npm test']);
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
    // npm ci runs `prepare`, which builds dist/, so the first command runs the compiled CLI.
    expect(pkg.scripts.prepare).toBe('npm run build');
    expect(pkg.scripts.test).toBe('npm run lint && npm run build && tsc --noEmit && vitest run');
    expect(pkg.bin['durable-agent']).toBe('bin/durable-agent.mjs');
  });

  it('has a programmatic example that runs with plain node as printed, is killed on demand, and resumes', () => {
    const example = writeExample();
    const cwd = tempDir();
    try {
      const crashed = example.run(cwd, 'after-effect-write:1');
      expect(crashed.signal).toBe('SIGKILL');
      expect(crashed.stdout).toBe('');
      expect(outbox(cwd)).toHaveLength(1);

      const resumed = example.run(cwd);
      expect(resumed.stderr).toBe('');
      expect(resumed.stdout).toBe(EXAMPLE_DONE_OUTPUT);

      const again = example.run(cwd);
      expect(again.stdout).toBe(EXAMPLE_DONE_OUTPUT);
      expect(outbox(cwd)).toHaveLength(1);
      // Attached, not started again: nothing was archived, one run in the folder.
      expect(fs.readdirSync(path.join(cwd, '.durable-agent', 'runs'))).toEqual(['invoice-acme-120']);
      expect(fs.existsSync(path.join(cwd, '.durable-agent', 'runs', 'invoice-acme-120', 'archive'))).toBe(false);
    } finally {
      example.remove();
    }
  });

  it("sends the example's invoice once as a new user would run it: killed after the effect, run, killed after the done record, run, run", () => {
    const example = writeExample();
    const cwd = tempDir();
    try {
      const sequence = ['after-effect-write:1', '', 'after-save-done:1', '', ''];
      const outcomes = sequence.map((crashAfter) => example.run(cwd, crashAfter));
      // Once the run is done, a start attaches to it and reaches no crash point: nothing runs.
      expect(outcomes.map((run) => run.signal)).toEqual(['SIGKILL', null, null, null, null]);
      for (const run of outcomes.slice(1)) expect(run.stdout).toBe(EXAMPLE_DONE_OUTPUT);
      expect(outbox(cwd)).toHaveLength(1);
    } finally {
      example.remove();
    }
  });

  it('sends it once killed by SIGKILL at every crash point of its path, the one after the final record included, then run twice', async () => {
    const points = await crashPointsOfTheExamplePath();
    expect(points).toContain('after-effect-write:1');
    expect(points[points.length - 1]).toBe('after-save-done:1');
    const example = writeExample();
    try {
      for (const point of points) {
        const cwd = tempDir();
        const killed = example.run(cwd, point);
        expect(killed.signal, point).toBe('SIGKILL');
        for (let again = 0; again < 2; again++) {
          const run = example.run(cwd);
          expect(run.stderr, point).toBe('');
          expect(run.stdout, point).toBe(EXAMPLE_DONE_OUTPUT);
        }
        expect(outbox(cwd), point).toHaveLength(1);
      }
    } finally {
      example.remove();
    }
  });

  it('sends it once when SIGKILLed from outside at random instants, run until it finishes (8 trials)', async () => {
    const example = writeExample();
    const random = seededRandom(42);
    try {
      for (let trial = 0; trial < 8; trial++) {
        const cwd = tempDir();
        let finished = false;
        for (let attempt = 0; attempt < 20 && !finished; attempt++) {
          // Half of the attempts are let run: a process start takes longer than the run itself.
          const killAfterMs = attempt % 2 === 0 ? Math.floor(random() * 400) : null;
          const run = await example.runKilledAfter(cwd, killAfterMs);
          finished = run.code === 0 && run.stdout === EXAMPLE_DONE_OUTPUT;
        }
        expect(finished, `trial ${trial}`).toBe(true);
        expect(outbox(cwd), `trial ${trial}`).toHaveLength(1);
      }
    } finally {
      example.remove();
    }
  });

  it('has a webhook receiver that runs as printed: it takes a signed event once, and refuses the same request replayed under another id or type', async () => {
    const secret = 'readme-receiver-secret-0123456789';
    const scratch = path.join(REPO, '.tmp');
    fs.mkdirSync(scratch, { recursive: true });
    const file = path.join(scratch, `readme-receiver-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`);
    fs.writeFileSync(file, readmeWebhookReceiver());
    const port = await freePort();
    const child = spawn(process.execPath, [file], { env: cliEnv({ DURABLE_AGENT_WEBHOOK_SECRET: secret, PORT: String(port) }) });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    try {
      const body = JSON.stringify({ id: 'c0a8e5f2-6b1d-4e8a-9f3e-2d7c1b0a9e11', type: 'run.done', run: 'r-1', state: 'done', at: new Date().toISOString() });
      const signature = signWebhookRequest(secret, { id: 'c0a8e5f2-6b1d-4e8a-9f3e-2d7c1b0a9e11', type: 'run.done', body }, Math.floor(Date.now() / 1000));
      const headers = { 'content-type': 'application/json', 'durable-agent-event-id': 'c0a8e5f2-6b1d-4e8a-9f3e-2d7c1b0a9e11', 'durable-agent-event-type': 'run.done', 'durable-agent-signature': signature };
      const send = async (sent: Record<string, string>) => (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: sent, body })).status;
      await vi.waitFor(async () => expect(await send(headers).catch(() => 0), 'the receiver listening, taking the event').toBe(200), { timeout: 10_000, interval: 50 });
      expect(await send(headers)).toBe(200);
      expect(await send({ ...headers, 'durable-agent-event-id': '5e0b7a7c-1f4e-4a55-8d0b-3c8b9e2f6a10' })).toBe(401);
      expect(await send({ ...headers, 'durable-agent-event-type': 'run.failed' })).toBe(401);
      expect(await send({ ...headers, 'durable-agent-signature': `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}` })).toBe(401);
      await vi.waitFor(() => expect(stdout).toBe('run.done r-1\n'), { timeout: 30_000, interval: 20 });
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(file, { force: true });
    }
  });
});

interface ExampleRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The README's example written inside the package, so that `import … from 'durable-agent'` resolves to this checkout's build. */
function writeExample() {
  const scratch = path.join(REPO, '.tmp');
  fs.mkdirSync(scratch, { recursive: true });
  const file = path.join(scratch, `readme-example-${process.pid}-${Math.random().toString(36).slice(2)}.mjs`);
  fs.writeFileSync(file, readmeProgrammaticExample());
  return {
    run(cwd: string, crashAfter = ''): ExampleRun {
      const result = spawnSync(process.execPath, [file], { cwd, encoding: 'utf8', env: cliEnv({ CRASH_AFTER: crashAfter || undefined }) });
      return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
    },
    runKilledAfter(cwd: string, killAfterMs: number | null): Promise<ExampleRun> {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [file], { cwd, env: cliEnv() });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const timer = killAfterMs === null ? null : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        child.on('error', reject);
        child.on('close', (code, signal) => {
          if (timer) clearTimeout(timer);
          resolve({ code, signal, stdout, stderr });
        });
      });
    },
    remove: () => fs.rmSync(file, { force: true }),
  };
}

/** The invoices the example sent: the lines of its outbox. */
function outbox(cwd: string): string[] {
  const file = path.join(cwd, 'outbox.txt');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/** Every crash label the example's run passes, in order: the same replies and tool, run once in memory. */
async function crashPointsOfTheExamplePath(): Promise<string[]> {
  const crashPoints = new CrashPoints(undefined);
  const tool = defineTool({ name: 'send_invoice', description: 'Email an invoice.', inputSchema: { type: 'object' }, readOnly: false, run: async () => 'sent' });
  const model = scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'send_invoice', input: { customer: 'ACME', amount: 120 } }]), endTurnReply('Invoice sent.')]);
  await startRun({ store: new MemoryStore('example'), model, tools: [tool], task: 'Invoice ACME for 120 EUR.', maxTurns: 10, crashPoints });
  return crashPoints.passed;
}

function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}
