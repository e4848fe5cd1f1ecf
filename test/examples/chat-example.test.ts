/**
 * The chat example (examples/chat/) as a user runs it: `node examples/chat/server.mjs`, a real
 * child process whose agent's model is a real model name, the SDK talking to a fake Messages API
 * on 127.0.0.1 that streams its replies in pieces; the page in Debian's chromium. A run is started
 * from the page, its text seen arriving, its call waiting for approval; the page reloaded mid-run
 * follows the run again; approved from the page, the note is saved; the server is SIGKILLed while
 * the next model call is in flight and started again on the same folder and port: the page,
 * reconnecting by itself, shows the end, and nothing twice (one note in the tool's own file).
 * Without a browser too: what the example's server serves (and does not), and its token kept
 * across a restart.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { cliEnv, REPO } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic, type FakeAnswer } from '../helpers/fake-anthropic.ts';
import { freePort } from '../helpers/free-port.ts';
import { chromiumPresent } from '../helpers/system-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const SERVER = path.join(REPO, 'examples', 'chat', 'server.mjs');
// A key of the real shape, made up (joined here so that no key-shaped text is committed).
const KEY = ['sk', 'ant', 'api03', 'chat-example-key-never-shown-0123456789'].join('-');
const USAGE = { input: 60, output: 20, cacheRead: 0, cacheWrite: 0 };
const FIRST = 'Let me read your notes first.';
const SECOND = 'I will save that note now.';
const LAST = 'Saved your note: buy milk.';

const haveChromium = chromiumPresent();
let browser: Browser;
interface Example {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}
const children: Example[] = [];

function startExample(dir: string, port: number, apiUrl: string): Example {
  const child = spawn(process.execPath, [SERVER], {
    cwd: REPO,
    // No DURABLE_AGENT_API_TOKEN: the example makes one and keeps it in its folder, the same after a restart.
    env: cliEnv({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: apiUrl, CHAT_DIR: dir, PORT: String(port), DURABLE_AGENT_API_TOKEN: undefined }),
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const started = { child, done, output: () => output };
  children.push(started);
  return started;
}

async function listening(example: Example): Promise<string> {
  return vi.waitFor(
    () => {
      const url = /\[chat\] (http:\/\/127\.0\.0\.1:\d+) /.exec(example.output())?.[1];
      if (!url) throw new Error(`the example has not said where it listens yet: ${example.output()}`);
      return url;
    },
    { timeout: 30_000, interval: 50 },
  );
}

const texts = (page: Page, selector: string) => page.locator(selector).allTextContents();

beforeAll(async () => {
  if (haveChromium) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  for (const example of children) example.child.kill('SIGKILL');
});

describe.skipIf(!haveChromium)('the chat example in chromium', () => {
  it('starts a run from the page, streams its text, survives a reload mid-run, takes an approval, and shows the end after a SIGKILL of its server, nothing twice', async () => {
    const dir = tempDir('da-chat-');
    const port = await freePort();
    let releaseText!: () => void;
    const textHeld = new Promise<void>((resolve) => (releaseText = resolve));
    let pageFollows!: () => void;
    const followed = new Promise<void>((resolve) => (pageFollows = resolve));
    const api = new FakeAnthropic((request): FakeAnswer => {
      const turn = assistantTurns(request);
      // The first reply starts once the page follows the run (text deltas are not kept for a later
      // reader), and stops a few pieces into its text until the test has seen them on the page.
      if (turn === 0) return { stream: { ...toolUseReply([{ id: 'toolu_read', name: 'read_notes', input: {} }], FIRST), usage: USAGE }, chunk: 4, gapMs: 10, holdAt: [{ event: 0, until: followed }, { event: 5, until: textHeld }] };
      if (turn === 1) return { stream: { ...toolUseReply([{ id: 'toolu_save', name: 'save_note', input: { text: 'buy milk' } }], SECOND), usage: USAGE }, chunk: 4, gapMs: 10 };
      // The reply after the note is saved never comes from this server: it is killed meanwhile.
      return { hang: true };
    });
    const apiUrl = await api.start();
    try {
      const first = startExample(dir, port, apiUrl);
      const url = await listening(first);
      const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(url);
      await page.fill('#task', 'Save a note: buy milk.');
      await page.click('#start');
      // The page keeps the run's id in its address (history.pushState: no navigation to wait for).
      await vi.waitFor(() => expect(page.url()).toMatch(/\?run=key-/), { timeout: 30_000, interval: 50 });
      const runId = new URL(page.url()).searchParams.get('run')!;
      // The page's event stream has brought a record (its status line names a state): the server
      // listens for the run's text by then, and the first reply may start.
      await page.waitForFunction(() => /^Run \S+: /.test(document.getElementById('status')?.textContent ?? ''));
      pageFollows();

      // The text as it streams: a part of the reply, shown before any of it is recorded.
      const live = page.locator('.msg.live');
      await live.waitFor();
      await vi.waitFor(async () => expect((await live.textContent())!.length).toBeGreaterThan(0), { timeout: 30_000, interval: 50 });
      const partial = (await live.textContent())!;
      expect(FIRST.startsWith(partial) && partial.length < FIRST.length, partial).toBe(true);
      expect(await page.locator('.msg.reply').count()).toBe(0);
      releaseText();

      // The call that changes something waits for a person.
      await page.locator('.msg.approval button.approve').waitFor({ timeout: 30_000 });
      expect(await texts(page, '.msg.reply')).toEqual([FIRST, SECOND]);
      expect(await page.locator('.msg.tool-call[data-name="read_notes"] .result').textContent()).toContain('(no notes yet)');

      // A reload mid-run: the page follows the run again from its address, and shows it as it was.
      await page.reload();
      await page.locator('.msg.approval button.approve').waitFor({ timeout: 30_000 });
      expect(new URL(page.url()).searchParams.get('run')).toBe(runId);
      expect(await texts(page, '.msg.task')).toEqual(['Save a note: buy milk.']);
      expect(await texts(page, '.msg.reply')).toEqual([FIRST, SECOND]);
      expect(await page.locator('.msg.approval').textContent()).toContain('buy milk');

      await page.click('.msg.approval button.approve');
      await page.locator('.msg.tool-call[data-name="save_note"] .result').waitFor({ timeout: 30_000 });
      expect(await page.locator('.msg.approval').count()).toBe(0);
      const notesFile = path.join(dir, 'notes.jsonl');
      expect(fs.readFileSync(notesFile, 'utf8').trim().split('\n')).toHaveLength(1);

      // The next model call is in flight: SIGKILL the whole example (page server and API at once).
      await vi.waitFor(() => expect(api.requests.filter((request) => assistantTurns(request) === 2)).toHaveLength(1), { timeout: 30_000, interval: 50 });
      first.child.kill('SIGKILL');
      expect((await first.done).signal).toBe('SIGKILL');
      expect(await page.locator('.msg.end').count()).toBe(0);

      api.respondWith((request) => (assistantTurns(request) === 2 ? { stream: { ...endTurnReply(LAST), usage: USAGE }, chunk: 6, gapMs: 5 } : { hang: true }));
      const second = startExample(dir, port, apiUrl);
      await listening(second);
      // The page reconnects by itself (the client's followRun, with the id of its last record).
      await page.locator('.msg.end').waitFor({ timeout: 60_000 });
      expect(second.output()).toContain(`took up run ${runId}`);
      expect(await texts(page, '.msg.end')).toEqual([`Done. ${LAST}`]);
      expect(await texts(page, '.msg.reply')).toEqual([FIRST, SECOND, LAST]);
      expect(await page.locator('.msg.tool-call[data-name="save_note"]').count()).toBe(1);
      expect(await page.locator('.msg.tool-call[data-name="save_note"] .result').count()).toBe(1);
      expect(await page.locator('.msg.live').count()).toBe(0);
      // The side effect happened once: one note in the tool's own file.
      const notes = fs.readFileSync(notesFile, 'utf8').trim().split('\n');
      expect(notes).toHaveLength(1);
      expect(JSON.parse(notes[0]!).text).toBe('buy milk');
      expect(await page.content()).not.toContain(KEY);
      expect(errors).toEqual([]);

      second.child.kill('SIGTERM');
      expect((await second.done).code).toBe(0);
    } finally {
      await api.stop();
    }
  }, 180_000);
});

describe('the chat example server', () => {
  it('serves the page with its token, the client’s modules and nothing else of the package, passes /v1 to the API, and keeps its token across a restart', async () => {
    const dir = tempDir('da-chat-');
    const port = await freePort();
    const first = startExample(dir, port, 'http://127.0.0.1:9');
    const url = await listening(first);
    const html = await (await fetch(url)).text();
    const token = /<meta name="api-token" content="([^"]+)">/.exec(html)?.[1];
    expect(token).toMatch(/^chat:[0-9a-f]{48}$/);
    expect(fs.statSync(path.join(dir, 'chat-token')).mode & 0o077).toBe(0);
    expect(html).toContain('"durable-agent/client": "/lib/client/index.js"');
    for (const file of ['/lib/client/index.js', '/lib/client/follow-run.js', '/lib/util/durable-agent-error.js', '/chat.js', '/chat.css']) {
      const answer = await fetch(`${url}${file}`);
      expect(answer.status, file).toBe(200);
    }
    for (const file of ['/lib/index.js', '/lib/client/../index.js', '/lib/%2e%2e/package.json', '/agent.mjs', '/server.mjs']) expect((await fetch(`${url}${file}`)).status, file).toBe(404);
    expect((await fetch(`${url}/v1/runs`)).status).toBe(401);
    const runs = await fetch(`${url}/v1/runs`, { headers: { authorization: `Bearer ${token}` } });
    expect(runs.status).toBe(200);
    expect(await runs.json()).toEqual({ runs: [], next: null });
    first.child.kill('SIGTERM');
    expect((await first.done).code).toBe(0);

    const second = startExample(dir, port, 'http://127.0.0.1:9');
    await listening(second);
    expect(await (await fetch(url)).text()).toContain(token);
    second.child.kill('SIGTERM');
    expect((await second.done).code).toBe(0);
  }, 60_000);

  it('says what is missing without a key, and stops', async () => {
    const child = spawn(process.execPath, [SERVER], { cwd: REPO, env: cliEnv({ CHAT_DIR: tempDir('da-chat-'), PORT: '0' }) });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('ANTHROPIC_API_KEY is not set');
  });
});

