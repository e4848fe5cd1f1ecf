/**
 * A tool's 1 MB picture under real SIGKILLs: the process is killed once the picture's blob is
 * durable and before the record that refers to it is written, and once that record is durable.
 * Either way the resume (the real SDK over HTTP to the fake Messages API) sends the model the
 * tool_result with the picture, byte for byte: re-run where the record was not written (a
 * read-only tool; the blob it left is reused, not written twice), taken from the ledger where it was.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ContentBlock } from '../../machines/agent-loop.types.ts';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { resumeRun } from '../../src/runtime/run-api.ts';
import { BLOBS_DIR } from '../../src/store/blobs.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { REPO } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { imageBlock, pngBytes, screenTool } from '../helpers/screen-tool.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'rich-results-run.ts');
const TSX = pathToFileURL(createRequire(path.join(REPO, 'package.json')).resolve('tsx')).href;
const BYTES = 1024 * 1024;
const PICTURE = pngBytes(BYTES);
const REPLIES = [toolUseReply([{ id: 'toolu_1', name: 'screenshot', input: {} }]), endTurnReply('seen it')];

function killedRun(dir: string, mode: 'blob' | 'record', url: string): Promise<{ signal: NodeJS.Signals | null; output: string }> {
  const child = spawn(process.execPath, ['--import', TSX, FIXTURE, dir, mode, url], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.on('close', (_code, signal) => resolve({ signal, output })));
}

function blobs(dir: string): string[] {
  const at = path.join(dir, '.durable-agent', BLOBS_DIR);
  return fs.existsSync(at) ? fs.readdirSync(at) : [];
}

function runs(dir: string): number {
  const log = path.join(dir, 'runs.log');
  return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;
}

describe('a tool result with a picture, SIGKILLed around its blob', () => {
  it.each([
    ['between the blob write and the record', 'blob', 2],
    ['after the record', 'record', 1],
  ] as const)('killed %s: the resume sends the picture byte for byte', { timeout: 60_000 }, async (_when, mode, toolRuns) => {
    const fake = new FakeAnthropic((request) => ({ reply: REPLIES[assistantTurns(request)]! }));
    const url = await fake.start();
    try {
      const dir = tempDir();
      const killed = await killedRun(dir, mode, url);
      expect(killed.signal, killed.output).toBe('SIGKILL');
      expect(blobs(dir)).toHaveLength(1);
      const [name] = blobs(dir);
      expect(fs.readFileSync(path.join(dir, '.durable-agent', BLOBS_DIR, name!)).equals(PICTURE)).toBe(true);

      const store = new FileStore(path.join(dir, '.durable-agent'));
      const journal = fs.readFileSync(store.journalPath, 'utf8');
      const before = foldJournal(store.location, await store.load());
      if (mode === 'blob') {
        expect(journal, 'no record refers to the blob yet').not.toContain(name);
        expect(before.ledger.has('toolu_1')).toBe(false);
      } else {
        expect(journal).toContain(name);
        expect(before.ledger.get('toolu_1')!.content).toEqual([{ type: 'text', text: 'the screen:' }, imageBlock(PICTURE.toString('base64'))]);
      }

      const model = anthropicModel({ model: 'claude-vision', apiKey: 'test-only-key-never-store-me-0123456789', baseURL: url, maxRetries: 0 });
      const result = await resumeRun({ store, model, tools: [screenTool(BYTES, path.join(dir, 'runs.log'))] });
      store.close();
      expect(result).toMatchObject({ status: 'done', text: 'seen it' });
      expect(runs(dir)).toBe(toolRuns);
      expect(blobs(dir), 'the blob is written once').toEqual([name]);

      const last = fake.requests[fake.requests.length - 1]!;
      const blocks = last.body.messages.flatMap((message) => (typeof message.content === 'string' ? [] : message.content));
      const result1 = blocks.find((block) => block.type === 'tool_result' && block.tool_use_id === 'toolu_1')!;
      const image = (result1.content as ContentBlock[]).find((block) => block.type === 'image') as unknown as { source: { type: string; media_type: string; data: string } };
      expect(image.source).toMatchObject({ type: 'base64', media_type: 'image/png' });
      expect(Buffer.from(image.source.data, 'base64').equals(PICTURE)).toBe(true);
    } finally {
      await fake.stop();
    }
  });
});
