/**
 * The README's Install and Quick start, as a newcomer follows them, in a scratch project. The
 * checkout's line (`npm ci && npm run pack -- ../my-agent`) is what `npm test` has done here:
 * dist/ is built, and packInto is the code `npm run pack` runs, writing into the project. The
 * project's line runs as printed, in a shell, from a folder beside the project as the checkout
 * is. The Quick start, copied from the README, runs with plain node and the real SDK against a
 * fake Messages API on 127.0.0.1 (ANTHROPIC_BASE_URL); then, in the project, `npx durable-agent
 * list` with no flags shows its run and `npx durable-agent status --run invoice-acme` exits 0.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { cliEnv } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic, type FakeAnswer } from '../helpers/fake-anthropic.ts';
import { readmeInstall, readmeQuickStart } from '../helpers/readme-example.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { packInto } from '../../scripts/pack.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const USAGE = { input: 50, output: 20, cacheRead: 0, cacheWrite: 0 };

/**
 * The child's environment: none of the npm_* settings `npm test` puts there (a prefix must not
 * point back here); npm answers from its cache, as the other package tests' installs do, since
 * no test reaches the internet. The commands themselves are the README's, unchanged.
 */
function env(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const base = cliEnv(extra);
  for (const name of Object.keys(base)) if (/^npm_/i.test(name)) delete base[name];
  return { ...base, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
}

function run(command: string, args: string[], cwd: string, extra: Record<string, string | undefined> = {}): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd, env: env(extra), encoding: 'utf8', timeout: 300_000 });
  if (result.error) throw result.error;
  return result;
}

/** A node program run without blocking this process: the fake API it talks to answers from here. */
function runNode(file: string, cwd: string, extra: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd, env: env(extra) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let checkout: string;
let project: string;
let server: FakeAnthropic;
let url: string;

beforeAll(async () => {
  const scratch = tempDir('da-install-');
  // The checkout's place, beside the project: the project's line starts with `cd ../my-agent`.
  checkout = path.join(scratch, 'durable-agent');
  fs.mkdirSync(checkout);
  project = path.join(scratch, 'my-agent');
  const [checkoutLine] = readmeInstall();
  expect(checkoutLine).toBe('npm ci && npm run pack -- ../my-agent');
  packInto(path.resolve(checkout, '../my-agent'));

  server = new FakeAnthropic((request): FakeAnswer => {
    if (assistantTurns(request) === 0) return { reply: { ...toolUseReply([{ id: 'toolu_01', name: 'send_invoice', input: { customer: 'ACME', amount: 120 } }]), usage: USAGE } };
    return { reply: { ...endTurnReply('Invoice sent to ACME.'), usage: USAGE } };
  });
  url = await server.start();
}, 300_000);

afterAll(async () => {
  await server?.stop();
});

// Installing a package and starting node programs are whole processes: on a busy machine they
// take minutes, and a test's verdict must not depend on how busy it is.
describe("the README's install and quick start, as printed", { timeout: 300_000 }, () => {
  it('installs the tarball, runs the Quick start against a fake API, and the CLI finds its run with no flags', async () => {
    const [, ...projectLines] = readmeInstall();
    for (const line of projectLines) {
      const installed = run('sh', ['-c', line], checkout);
      expect(installed.status, `${line}\n${installed.stdout}\n${installed.stderr}`).toBe(0);
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8'));
    expect(manifest.dependencies['durable-agent']).toMatch(/^file:durable-agent-\d+\.\d+\.\d+\.tgz$/);
    expect(fs.existsSync(path.join(project, 'node_modules', 'durable-agent', 'dist', 'src', 'index.js'))).toBe(true);

    fs.writeFileSync(path.join(project, 'agent.mjs'), readmeQuickStart());
    const agent = await runNode('agent.mjs', project, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url });
    expect(agent.stderr).toBe('');
    expect(agent.code).toBe(0);
    expect(agent.stdout).toBe('done Invoice sent to ACME.\n');
    expect(server.requests).toHaveLength(2);
    expect(fs.readFileSync(path.join(project, 'outbox.txt'), 'utf8').split('\n').filter(Boolean)).toHaveLength(1);

    const list = run('npx', ['durable-agent', 'list'], project);
    expect(list.stderr).toBe('');
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/^invoice-acme\s+done\s+Invoice ACME for 120 EUR/m);
    expect(list.stdout.trimEnd().split('\n').at(-1)).toBe(`1 run in ${path.join(project, '.durable-agent')}`);

    const status = run('npx', ['durable-agent', 'status', '--run', 'invoice-acme'], project);
    expect(status.stderr).toBe('');
    expect(status.status).toBe(0);
    expect(status.stdout).toContain('Invoice sent to ACME.');
  });
});
