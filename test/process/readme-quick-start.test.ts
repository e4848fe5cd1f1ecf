/**
 * The README's quick start, run as printed with plain node, the real SDK and a fake Messages API
 * on 127.0.0.1: SIGKILLed from outside once its invoice is sent and recorded (the model's next
 * answer held back), run again it finishes and sends nothing more; run once more it answers from
 * the store without a request.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { cliEnv, REPO } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic, type FakeAnswer } from '../helpers/fake-anthropic.ts';
import { readmeQuickStart } from '../helpers/readme-example.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const USAGE = { input: 50, output: 20, cacheRead: 0, cacheWrite: 0 };

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runNode(file: string, cwd: string, env: Record<string, string>, killWhen?: () => boolean): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd, env: cliEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const watch = killWhen ? setInterval(() => killWhen() && child.kill('SIGKILL'), 10) : null;
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (watch) clearInterval(watch);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const outbox = (cwd: string) => {
  const file = path.join(cwd, 'outbox.txt');
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
};

describe("the README's quick start", () => {
  it('killed after its invoice went out, run again: it finishes without sending another; a third run answers from the store', async () => {
    let holdTheAnswer = true;
    const server = new FakeAnthropic((request): FakeAnswer => {
      if (assistantTurns(request) === 0) return { reply: { ...toolUseReply([{ id: 'toolu_01', name: 'send_invoice', input: { customer: 'ACME', amount: 120 } }]), usage: USAGE } };
      return holdTheAnswer ? { hang: true } : { reply: { ...endTurnReply('Invoice sent to ACME.'), usage: USAGE } };
    });
    const url = await server.start();
    const scratch = path.join(REPO, '.tmp');
    fs.mkdirSync(scratch, { recursive: true });
    const file = path.join(scratch, `quick-start-${process.pid}.mjs`);
    fs.writeFileSync(file, readmeQuickStart());
    const cwd = tempDir();
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url };
    try {
      // The second request is sent only once the tool's result is saved (checkpoint B): killed then.
      const killed = await runNode(file, cwd, env, () => server.requests.length >= 2);
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      expect(outbox(cwd)).toHaveLength(1);

      holdTheAnswer = false;
      const resumed = await runNode(file, cwd, env);
      expect(resumed.stderr).toBe('');
      expect(resumed.stdout).toBe('done Invoice sent to ACME.\n');
      expect(outbox(cwd)).toHaveLength(1);
      const requests = server.requests.length;

      const again = await runNode(file, cwd, env);
      expect(again.stdout).toBe('done Invoice sent to ACME.\n');
      expect(server.requests.length).toBe(requests);
      expect(outbox(cwd)).toHaveLength(1);
      // The key reached the server and nothing the run keeps.
      const journal = fs.readFileSync(path.join(cwd, '.durable-agent', 'runs', 'invoice-acme', 'journal.jsonl'), 'utf8');
      expect(journal).not.toContain(KEY);
    } finally {
      fs.rmSync(file, { force: true });
      await server.stop();
    }
  });

  it('without a key it says so before anything runs', async () => {
    const scratch = path.join(REPO, '.tmp');
    fs.mkdirSync(scratch, { recursive: true });
    const file = path.join(scratch, `quick-start-nokey-${process.pid}.mjs`);
    fs.writeFileSync(file, readmeQuickStart());
    const cwd = tempDir();
    try {
      const run = await runNode(file, cwd, {});
      expect(run.code).not.toBe(0);
      expect(run.stderr).toContain('MissingApiKeyError');
      expect(run.stderr).toContain('Pass apiKey to anthropicModel, or set ANTHROPIC_API_KEY');
      expect(fs.existsSync(path.join(cwd, '.durable-agent'))).toBe(false);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
