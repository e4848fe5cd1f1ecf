/**
 * Secrets never leave the process: not in what a command prints (an endpoint that echoes the
 * request's headers into its error), not in the journal (a tool's error that quotes a key), not
 * on the TUI. The real CLI against the fake Anthropic API on 127.0.0.1.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedModel, toolUseReply, endTurnReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { endingText } from '../../src/tui/format.ts';
import { initialView, reduceView } from '../../src/tui/run-view.ts';
import { REDACTED, redactSecrets, redactSecretsIn } from '../../src/util/redact.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

// Built at run time: a committed string shaped like a key would trip secret scanners.
const KEY_PREFIX = ['sk', 'ant', 'api03'].join('-');
const KEY = `${KEY_PREFIX}-testonly${'Q7'.repeat(20)}_never-print-me`;
/** A key the gateway holds, not ours: redacted by its shape alone. */
const OTHER_KEY = `${KEY_PREFIX}-gatewayonly${'Z9'.repeat(20)}`;
const MODEL = 'claude-test-model';

function allFiles(dir: string): string[] {
  const files: string[] = [];
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else files.push(full);
    }
  };
  walk(dir);
  return files;
}

function expectNowhere(secret: string, dir: string, texts: string[]): void {
  for (const text of texts) expect(text.includes(secret)).toBe(false);
  for (const file of allFiles(dir)) expect(fs.readFileSync(file).includes(secret), file).toBe(false);
}

describe('redactSecrets', () => {
  it('takes out the key of the environment, key-shaped strings, auth headers and URL passwords', () => {
    const env = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'plain-env-key-0123456789';
    try {
      const text = [
        'key plain-env-key-0123456789 echoed',
        `Authorization: Bearer ${OTHER_KEY}`,
        '{"x-api-key":"abcdefgh12345678","authorization":"Bearer tok_1234567890"}',
        'postgresql://worker:s3cr%40t@db.internal:5432/runs failed',
        'host=db password=hunter2222 user=x',
        'proxy-authorization: Basic dXNlcjpwYXNz',
      ].join('\n');
      const out = redactSecrets(text);
      for (const secret of ['plain-env-key-0123456789', OTHER_KEY.slice(7), 'abcdefgh12345678', 'tok_1234567890', 's3cr%40t', 'hunter2222', 'dXNlcjpwYXNz']) {
        expect(out).not.toContain(secret);
      }
      expect(out).toContain('postgresql://worker:[redacted]@db.internal:5432/runs failed');
      expect(out).toContain(`Authorization: Bearer ${REDACTED}`);
    } finally {
      if (env === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = env;
    }
  });

  it('leaves ordinary text alone', () => {
    const text = 'The Anthropic API answered 401 for claude-x: invalid x-api-key. Check ANTHROPIC_API_KEY; see http://127.0.0.1:8080/v1 (the bearer of bad news)';
    expect(redactSecrets(text)).toBe(text);
    expect(redactSecrets('a', ['x'])).toBe('a');
  });
});

describe('an endpoint that echoes the request headers into its error', () => {
  for (const status of [400, 401]) {
    it.concurrent(`a ${status} body with the key: run prints none of it and stores none of it`, async () => {
      const dir = tempDir();
      const server = new FakeAnthropic((request) => ({
        status,
        errorType: status === 401 ? 'authentication_error' : 'invalid_request_error',
        message:
          `rejected by gateway; request headers: {"x-api-key": "${String(request.headers['x-api-key'] ?? '')}", ` +
          `"authorization": "${String(request.headers.authorization ?? `Bearer ${KEY}`)}"}; key ${KEY}; upstream ${OTHER_KEY}`,
      }));
      const url = await server.start();
      try {
        const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url };
        const plain = await runCliAsync(['run', '--task', 'x', '--model', MODEL, '--max-retries', '0'], { cwd: dir, env });
        const verbose = await runCliAsync(['run', '--resume', '--model', MODEL, '--max-retries', '0', '--verbose'], { cwd: dir, env });
        const status_ = await runCliAsync(['status'], { cwd: dir, env });
        expect(plain.code, plain.stderr).toBe(3);
        expect(verbose.code, verbose.stderr).toBe(3);
        expect(plain.stderr).toContain(`answered ${status}`);
        expect(plain.stderr).toContain(REDACTED);
        expect(server.requests.length).toBe(2);
        const printed = [plain, verbose, status_].flatMap((r) => [r.stdout, r.stderr]);
        expectNowhere(KEY, dir, printed);
        expectNowhere(OTHER_KEY, dir, printed);
      } finally {
        await server.stop();
      }
    });
  }
});

describe('a tool whose error quotes a key', () => {
  it('stores and reports the error without the key', async () => {
    const dir = tempDir();
    const store = new FileStore(path.join(dir, '.durable-agent'));
    const leaky = defineTool({
      name: 'call_service',
      description: 'calls a service',
      inputSchema: { type: 'object', properties: {} },
      readOnly: true,
      run: async () => {
        throw new Error(`403 from service; sent headers Authorization: Bearer ${OTHER_KEY}`);
      },
    });
    const seen: string[] = [];
    const model = scriptedModel(
      [
        () => toolUseReply([{ id: 'toolu_1', name: 'call_service', input: {} }]),
        (messages) => {
          seen.push(JSON.stringify(messages));
          return endTurnReply('done');
        },
      ],
      { name: 'scripted' },
    );
    const result = await startRun({ store, model, tools: [leaky], task: 'call it' });
    expect(result.status).toBe('done');
    expect(seen[0]).toContain(`Bearer ${REDACTED}`);
    expectNowhere(OTHER_KEY, dir, seen);
  });
});

describe('the TUI', () => {
  it('draws no secret: log lines, reconcile details and the failure message', () => {
    let view = initialView({ verbose: true, resumeHint: 'durable-agent demo --resume', task: null });
    view = reduceView(view, { type: 'print', stream: 'err', text: `durable-agent: gateway said Authorization: Bearer ${OTHER_KEY}` });
    const call = { id: 'toolu_1', name: 'x', input: {}, readOnly: false };
    view = reduceView(view, { type: 'event', at: 1, event: { type: 'reconciled', call, decision: 'unknown-reported', detail: `verify() failed: ${OTHER_KEY}` } });
    view = reduceView(view, {
      type: 'event',
      at: 2,
      event: {
        type: 'finished',
        result: {
          runId: 'r',
          status: 'failed',
          text: null,
          failure: { reason: 'invalid_reply', message: `reply echoed ${OTHER_KEY}`, retryable: true },
          turn: 1,
          maxTurns: 5,
          usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        },
      },
    });
    const drawn = JSON.stringify([view.log, view.reconciled, endingText(view)]);
    expect(drawn).toContain(REDACTED);
    expect(drawn).not.toContain(OTHER_KEY.slice(7));
  });
});

describe('secrets out of a tool result (redactSecretsIn)', () => {
  it('replaces them in every string of the blocks, leaves base64 bytes alone, and copies nothing when none is there', () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: `AAAA${'Q7'.repeat(20)}` } };
    const blocks = [{ type: 'text', text: `key ${KEY}` }, image, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: KEY }, title: 'notes' }];
    const redacted = redactSecretsIn(blocks, [KEY, 'Q7'.repeat(20)]);
    expect(redacted).toEqual([{ type: 'text', text: `key ${REDACTED}` }, image, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: REDACTED }, title: 'notes' }]);
    expect(redacted[1]).toBe(image);
    const clean = [{ type: 'text', text: 'nothing here' }];
    expect(redactSecretsIn(clean, [KEY])).toBe(clean);
    expect(redactSecretsIn(`a ${KEY}`, [])).toBe(`a ${KEY}`);
  });
});
