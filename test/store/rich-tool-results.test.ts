/**
 * Tools that return images and documents: on a real file store, each payload is kept once in a
 * blob (DIR/.durable-agent/blobs/sha256-<hex>), written and synced before the record that refers
 * to it; records and snapshots hold a reference. Loads put the bytes back, so the resume and the
 * request to the model (the real SDK over HTTP to the fake Messages API) get the block exactly as
 * the tool returned it. A missing or changed blob is refused, never read as a conversation without
 * it; a result the API would refuse is an is_error result for the model; history and the
 * visualizer name the payload and never show its base64.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContentBlock, Message, ToolOutcome } from '../../machines/agent-loop.types.ts';
import { historyCommand } from '../../src/cli/commands/status.ts';
import { forkRun } from '../../src/fork/fork-run.ts';
import { mcpTools } from '../../src/mcp/mcp-tools.ts';
import { anthropicModel } from '../../src/model/anthropic-model.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { estimateMessageTokens, IMAGE_TOKENS } from '../../src/model/estimate-tokens.ts';
import { CrashPoints, SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { readRunHistory } from '../../src/runtime/run-status.ts';
import { pruneRuns } from '../../src/prune/prune-archive.ts';
import { StoreBlobError } from '../../src/store/blob-errors.ts';
import { BLOBS_DIR } from '../../src/store/blobs.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { frameLine } from '../../src/store/journal/framing.ts';
import { recordableContent } from '../../src/tools/recordable.ts';
import { RESULT_LIMITS } from '../../src/tools/sendable.ts';
import { defineTool, type ToolDefinition } from '../../src/tools/tool.ts';
import { vizPage } from '../../visualizer/viz-page.ts';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { assistantTurns, FakeAnthropic, type ReceivedRequest } from '../helpers/fake-anthropic.ts';
import { stdioServer } from '../helpers/mcp-servers.ts';
import { imageBlock as pictureBlock, pngBytes } from '../helpers/screen-tool.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const KEY = 'test-only-key-never-store-me-0123456789';

const SCREEN = pngBytes(1024 * 1024);
const SCREEN_BASE64 = SCREEN.toString('base64');
const imageBlock = (data = SCREEN_BASE64, mediaType = 'image/png'): ContentBlock => pictureBlock(data, mediaType);

/** A read-only tool that returns a picture of the screen in call `n` = 1, and text in every other call. */
function screenTool(runs: { count: number } = { count: 0 }, picture: () => unknown = () => [{ type: 'text', text: 'the screen:' }, imageBlock()]): ToolDefinition {
  return defineTool({
    name: 'screenshot',
    description: 'A picture of the screen.',
    readOnly: true,
    inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
    run: (input: { n?: number }) => {
      runs.count += 1;
      return input.n === 1 ? picture() : `screen ${input.n} unchanged`;
    },
  });
}

function script(turns: number) {
  const steps = Array.from({ length: turns - 1 }, (_, i) => toolUseReply([{ id: `toolu_${i + 1}`, name: 'screenshot', input: { n: i + 1 } }]));
  return [...steps, endTurnReply('looked at the screen')];
}

function stateDir(dir: string): string {
  return path.join(dir, '.durable-agent');
}

function blobFiles(dir: string): string[] {
  const blobs = path.join(stateDir(dir), BLOBS_DIR);
  return fs.existsSync(blobs) ? fs.readdirSync(blobs).map((name) => path.join(blobs, name)) : [];
}

function imageOf(outcome: ToolOutcome | undefined): ContentBlock | undefined {
  return Array.isArray(outcome?.content) ? outcome.content.find((block) => block.type === 'image') : undefined;
}

/** The last tool_result of a request's messages with this id. */
function resultBlockOf(messages: Message[], id: string): ContentBlock | undefined {
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) if (block.type === 'tool_result' && block.tool_use_id === id) return block;
  }
  return undefined;
}

describe('the journal keeps a payload once', () => {
  it.each([
    ['only at compactions (the default)', 0],
    ['every 5 records', 5],
  ])('a 1 MB image in turn 1 of a 20-turn run, snapshots %s: one blob of its bytes, references in the records, read back byte for byte', async (_label, every) => {
    const dir = tempDir();
    const store = new FileStore(stateDir(dir));
    const result = await startRun({ store, model: scriptedModel(script(20)), tools: [screenTool()], task: 'Look at the screen.', maxTurns: 20, snapshotEvery: every });
    expect(result.status).toBe('done');

    const blobs = blobFiles(dir);
    expect(blobs).toHaveLength(1);
    expect(fs.readFileSync(blobs[0]!).equals(SCREEN), 'the blob holds the image bytes, not their base64').toBe(true);
    const journalBytes = fs.statSync(store.journalPath).size;
    const journal = fs.readFileSync(store.journalPath, 'utf8');
    expect(journal).not.toContain(SCREEN_BASE64.slice(5_000, 5_100));
    // What the same journal holds with every payload inline, as it did before blobs: every line of it, framed.
    const loaded = await store.load();
    const inline = loaded.records.reduce((sum, stored) => sum + frameLine(stored.record).length, 0);
    const snapshots = loaded.records.filter((stored) => stored.record.snapshot).length;
    expect(journalBytes, `journal ${journalBytes} B + blob ${SCREEN.length} B; inline it would be ${inline} B (${snapshots} snapshots)`).toBeLessThan(100_000);
    expect(inline).toBeGreaterThan((snapshots + 1) * SCREEN_BASE64.length);

    const view = foldJournal(store.location, loaded);
    expect(imageOf(view.ledger.get('toolu_1'))).toEqual(imageBlock());
    expect(resultBlockOf(view.context.messages, 'toolu_1')!.content).toEqual([{ type: 'text', text: 'the screen:' }, imageBlock()]);
  });

  it('a small image stays inline; base64 with line breaks is stored in its standard form, the same text the model is sent', async () => {
    const dir = tempDir();
    const store = new FileStore(stateDir(dir));
    const icon = pngBytes(300).toString('base64');
    const wrapped = SCREEN_BASE64.replace(/(.{76})/g, '$1\r\n');
    const tool = defineTool({
      name: 'screenshot',
      description: 'x',
      readOnly: true,
      inputSchema: { type: 'object' },
      run: () => [imageBlock(icon), { type: 'image', source: { data: wrapped, media_type: 'image/png', type: 'base64' } }],
    });
    await startRun({ store, model: scriptedModel(script(2)), tools: [tool], task: 't' });
    expect(blobFiles(dir)).toHaveLength(1);
    expect(fs.readFileSync(store.journalPath, 'utf8')).toContain(icon);
    const outcome = foldJournal(store.location, await store.load()).ledger.get('toolu_1')!;
    expect(outcome.content).toEqual([imageBlock(icon), imageBlock()]);
  });

  it('a resume after a kill puts the image back in the conversation it sends, and a fork takes it into its own folder', async () => {
    const dir = tempDir();
    const store = new FileStore(stateDir(dir));
    const runs = { count: 0 };
    const crashed = await startRun({ store, model: scriptedModel(script(4)), tools: [screenTool(runs)], task: 't', maxTurns: 4, snapshotEvery: 2, crashAfter: 'after-effect-write:2' }).catch((error: unknown) => error);
    expect(crashed).toBeInstanceOf(SimulatedCrash);
    store.close();
    const seen: Message[][] = [];
    const model = scriptedModel(script(4));
    const watching = { ...model, createMessage: (request: Parameters<typeof model.createMessage>[0]) => (seen.push(request.messages.slice()), model.createMessage(request)) };
    const resumed = await resumeRun({ store, model: watching, tools: [screenTool(runs)], snapshotEvery: 2 });
    expect(resumed.status).toBe('done');
    expect(runs.count, 'each call ran once: the ledger holds the image').toBe(3);
    for (const messages of seen) expect(resultBlockOf(messages, 'toolu_1')!.content).toEqual([{ type: 'text', text: 'the screen:' }, imageBlock()]);

    const child = tempDir();
    await forkRun({ from: dir, to: child, at: 5 });
    expect(blobFiles(child).map((file) => path.basename(file))).toEqual(blobFiles(dir).map((file) => path.basename(file)));
    const childView = foldJournal(stateDir(child), await new FileStore(stateDir(child)).load());
    expect(imageOf(childView.ledger.get('toolu_1'))).toEqual(imageBlock());
  });
});

describe('killed at every crash point of a run with a picture and a PDF, snapshots at every record', () => {
  const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n'), pngBytes(50_000, 3)]).toString('base64');
  const document: ContentBlock = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf }, title: 'report' };
  const steps = [
    toolUseReply([{ id: 'toolu_1', name: 'screenshot', input: { n: 1 } }]),
    toolUseReply([{ id: 'toolu_2', name: 'file_report', input: {} }, { id: 'toolu_3', name: 'screenshot', input: { n: 1 } }]),
    endTurnReply('filed'),
  ];
  function tools(filed: string[]) {
    const fileReport = defineTool({
      name: 'file_report',
      description: 'File the report (a side effect; checkable).',
      readOnly: false,
      inputSchema: { type: 'object' },
      run: (_input, ctx) => {
        filed.push(ctx.idempotencyKey);
        return [{ type: 'text', text: 'filed:' }, document];
      },
      verify: (_input, ctx) => ({ happened: filed.includes(ctx.idempotencyKey), result: [{ type: 'text', text: 'filed:' }, document] }),
    });
    return [screenTool(), fileReport];
  }

  it('each resume finishes with both payloads byte for byte, the side effect once, one blob each', async () => {
    const crashPoints = new CrashPoints(undefined);
    await startRun({ store: new FileStore(stateDir(tempDir())), model: scriptedModel(steps), tools: tools([]), task: 't', snapshotEvery: 1, crashPoints });
    expect(crashPoints.passed.length).toBeGreaterThan(10);
    for (const point of crashPoints.passed.slice(0, -1)) {
      const dir = tempDir();
      const store = new FileStore(stateDir(dir));
      const filed: string[] = [];
      const crashed = await startRun({ store, model: scriptedModel(steps), tools: tools(filed), task: 't', snapshotEvery: 1, crashAfter: point }).catch((error: unknown) => error);
      expect(crashed, point).toBeInstanceOf(SimulatedCrash);
      store.close();
      const result = await resumeRun({ store, model: scriptedModel(steps), tools: tools(filed), snapshotEvery: 1 });
      expect(result.status, point).toBe('done');
      expect(new Set(filed).size, point).toBe(1);
      const view = foldJournal(store.location, await store.load());
      expect(resultBlockOf(view.context.messages, 'toolu_1')!.content, point).toEqual([{ type: 'text', text: 'the screen:' }, imageBlock()]);
      expect(resultBlockOf(view.context.messages, 'toolu_3')!.content, point).toEqual([{ type: 'text', text: 'the screen:' }, imageBlock()]);
      const filedResult = resultBlockOf(view.context.messages, 'toolu_2')!.content as ContentBlock[];
      expect(filedResult.find((block) => block.type === 'document'), point).toEqual(document);
      expect(blobFiles(dir), point).toHaveLength(2);
    }
  }, 120_000);
});

describe('a blob that is not there as written is refused', () => {
  async function finishedRun() {
    const dir = tempDir();
    const store = new FileStore(stateDir(dir));
    await startRun({ store, model: scriptedModel(script(3)), tools: [screenTool()], task: 't', maxTurns: 3 });
    store.close();
    return { dir, store, blob: blobFiles(dir)[0]!, journal: fs.readFileSync(store.journalPath) };
  }

  it.each([
    ['missing', (blob: string) => fs.rmSync(blob), /there is none by that name/],
    ['corrupt', (blob: string) => fs.writeFileSync(blob, Buffer.alloc(SCREEN.length, 1)), /its bytes have the SHA-256 [0-9a-f]{64}, not the one in its name/],
    ['corrupt', (blob: string) => fs.truncateSync(blob, 1000), /it holds 1000 bytes, not the 1048576 the record names/],
  ])('%s: load, resume and history refuse with StoreBlobError naming the journal, the record and the blob; nothing changes', async (problem, damage, found) => {
    const { dir, store, blob, journal } = await finishedRun();
    damage(blob);
    const refused = await store.load().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreBlobError);
    expect(refused).toMatchObject({ name: 'StoreBlobError', kind: 'refused', problem, location: store.journalPath, blob, seq: expect.any(Number) });
    expect((refused as Error).message).toMatch(found);
    expect((refused as Error).message).toContain('Put the blob back from a backup');
    await expect(resumeRun({ store, model: scriptedModel(script(3)), tools: [screenTool()], maxTurns: 5 })).rejects.toBeInstanceOf(StoreBlobError);
    await expect(readRunHistory(new FileStore(stateDir(dir)))).rejects.toBeInstanceOf(StoreBlobError);
    expect(fs.readFileSync(store.journalPath).equals(journal)).toBe(true);
  });
});

describe('the image reaches the model as an image block (the real SDK over HTTP)', () => {
  it('the next request carries the tool_result with the image block, byte for byte, before and after a kill and resume', async () => {
    const replies = script(3);
    const fake = new FakeAnthropic((request: ReceivedRequest) => ({ reply: replies[assistantTurns(request)] as never }));
    const url = await fake.start();
    try {
      const dir = tempDir();
      const store = new FileStore(stateDir(dir));
      const model = () => anthropicModel({ model: 'claude-vision', apiKey: KEY, baseURL: url, maxRetries: 0 });
      const runs = { count: 0 };
      const crashed = await startRun({ store, model: model(), tools: [screenTool(runs)], task: 't', maxTurns: 3, crashAfter: 'after-save-b:2' }).catch((error: unknown) => error);
      expect(crashed).toBeInstanceOf(SimulatedCrash);
      store.close();
      const result = await resumeRun({ store, model: model(), tools: [screenTool(runs)] });
      expect(result).toMatchObject({ status: 'done', text: 'looked at the screen' });
      expect(runs.count).toBe(2);
      const later = fake.requests.filter((request) => assistantTurns(request) >= 1);
      expect(later.length).toBeGreaterThanOrEqual(2);
      for (const request of later) {
        const block = resultBlockOf(request.body.messages, 'toolu_1')!;
        expect(block.content).toEqual([{ type: 'text', text: 'the screen:' }, expect.objectContaining(imageBlock())]);
        const image = (block.content as ContentBlock[])[1] as unknown as { source: { data: string } };
        expect(Buffer.from(image.source.data, 'base64').equals(SCREEN)).toBe(true);
      }
    } finally {
      await fake.stop();
    }
  });
});

describe('tool result clearing (clear_tool_uses_20250919) with pictures', () => {
  it('the API clears the old pictures from what it reads; the process sends them whole and the journal keeps them, once', async () => {
    const replies = [...script(6)];
    // The picture in every call, not only the first: five results to clear.
    const everyTime = defineTool({ name: 'screenshot', description: 'x', readOnly: true, inputSchema: { type: 'object' }, run: () => [imageBlock()] });
    const fake = new FakeAnthropic((request: ReceivedRequest) => ({ reply: replies[assistantTurns(request)] as never }));
    const url = await fake.start();
    try {
      const dir = tempDir();
      const store = new FileStore(stateDir(dir));
      const model = anthropicModel({ model: 'claude-clearing', apiKey: KEY, baseURL: url, maxRetries: 0 });
      const result = await startRun({ store, model, tools: [everyTime], task: 't', maxTurns: 6, snapshotEvery: 3, clearToolUses: { triggerTokens: 1_000, keep: 1 } });
      expect(result).toMatchObject({ status: 'done', text: 'looked at the screen' });
      expect(fake.clearings.length).toBeGreaterThan(0);
      const last = fake.requests[fake.requests.length - 1]!;
      for (let n = 1; n <= 5; n++) expect(resultBlockOf(last.body.messages, `toolu_${n}`)!.content).toEqual([imageBlock()]);
      expect(blobFiles(dir)).toHaveLength(1);
      expect(fs.statSync(store.journalPath).size).toBeLessThan(100_000);
      const view = foldJournal(store.location, await store.load());
      for (let n = 1; n <= 5; n++) expect(view.ledger.get(`toolu_${n}`)?.content ?? resultBlockOf(view.context.messages, `toolu_${n}`)!.content).toEqual([imageBlock()]);
    } finally {
      await fake.stop();
    }
  });
});

describe("a result over the API's limits is an is_error result for the model, not a crash", () => {
  const tooLarge = pngBytes(Math.ceil((RESULT_LIMITS.imageBase64Chars * 3) / 4) + 3000).toString('base64');
  const jpegBytes = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(2000, 5)]).toString('base64');
  it.each([
    ['an image over 5 MB', () => [imageBlock(tooLarge)], /takes at most 5\.0 MB of base64 in one image, and image 1 has 5\.0 MB|image 1 has 5\.\d MB/],
    ['JPEG bytes said to be a PNG', () => [imageBlock(jpegBytes)], /image 1 says image\/png but its bytes are image\/jpeg/],
    ['an image type the API does not read', () => [imageBlock(SCREEN_BASE64, 'image/bmp')], /takes images of image\/jpeg, image\/png, image\/gif, image\/webp only, and image 1 is "image\/bmp"/],
    ['data that is not base64', () => [imageBlock('not base64!')], /the data of image 1 is not base64/],
    ['101 images', () => Array.from({ length: 101 }, () => imageBlock(pngBytes(100).toString('base64'))), /takes at most 100 images in one request, and the result holds 101/],
    ['a document of a type the API does not read', () => [{ type: 'document', source: { type: 'base64', media_type: 'application/zip', data: SCREEN_BASE64 } }], /base64 documents of application\/pdf only/],
  ])('%s', async (_name, picture, says) => {
    const dir = tempDir();
    const store = new FileStore(stateDir(dir));
    const result = await startRun({ store, model: scriptedModel(script(2)), tools: [screenTool({ count: 0 }, picture)], task: 't' });
    expect(result.status).toBe('done');
    const outcome = foldJournal(store.location, await store.load()).ledger.get('toolu_1')!;
    expect(outcome).toMatchObject({ kind: 'ran', is_error: true });
    expect(outcome.content).toMatch(says);
    expect(outcome.content).toContain('Call it again only for less');
    expect(blobFiles(dir)).toEqual([]);
  });

  it('a PDF, a text document and images by URL or file id are taken as they are', () => {
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(3000, 32)]).toString('base64');
    const blocks = [
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf }, title: 'report' },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
      { type: 'image', source: { type: 'file', file_id: 'file_011' } },
    ];
    expect(recordableContent(blocks)).toEqual({ content: blocks });
  });
});

describe('compaction and the token estimate', () => {
  it('an image counts as the tokens the API reads, not as its base64; a compaction snapshot holds the reference', async () => {
    expect(estimateMessageTokens({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: [imageBlock()] }] })).toBeLessThan(IMAGE_TOKENS + 50);
    const dir = tempDir();
    const store = new FileStore(stateDir(dir));
    const page = 'word '.repeat(2_000);
    const tool = defineTool({
      name: 'screenshot',
      description: 'x',
      readOnly: true,
      inputSchema: { type: 'object' },
      run: (input: { n?: number }) => (input.n === 1 ? [imageBlock()] : page),
    });
    const result = await startRun({ store, model: scriptedModel(script(12), { contextWindow: 8_000 }), tools: [tool], task: 't', maxTurns: 12, compaction: { mode: 'client', contextWindow: 8_000 } });
    expect(result.status).toBe('done');
    const loaded = await store.load();
    const view = foldJournal(store.location, loaded);
    expect(view.context.compacted?.times).toBeGreaterThan(0);
    const lines = fs.readFileSync(store.journalPath, 'utf8').split('\n');
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(200_000);
    expect(blobFiles(dir)).toHaveLength(1);
  });
});

describe('prune removes the blobs no journal refers to', () => {
  function pictureRun(seed: number) {
    const data = pngBytes(20_000, seed).toString('base64');
    return { data, tool: defineTool({ name: 'screenshot', description: 'x', readOnly: true, inputSchema: { type: 'object' }, run: () => [imageBlock(data)] }) };
  }

  it("an archived run's blobs go with it, and what a kill left mid-write; the current run's stay; nothing while another process holds the run", async () => {
    const dir = tempDir();
    const store = new FileStore(stateDir(dir));
    const old = pictureRun(1);
    await startRun({ store, model: scriptedModel(script(2)), tools: [old.tool], task: 't' });
    await store.archive();
    const current = pictureRun(2);
    await startRun({ store, model: scriptedModel(script(2)), tools: [current.tool], task: 't' });
    store.close();
    const [oldBlob, currentBlob] = [old.data, current.data].map((data) => blobFiles(dir).find((file) => fs.readFileSync(file).toString('base64') === data)!) as [string, string];
    // What a kill during a blob's write leaves: its temp file beside it.
    const partial = path.join(stateDir(dir), BLOBS_DIR, `sha256-${'0'.repeat(64)}.tmp-4242-0123abcd`);
    fs.writeFileSync(partial, 'half a picture');

    const held = await new FileStore(stateDir(dir)).lock();
    const busy = await pruneRuns(store, { keep: 1 });
    expect(busy.blobs).toMatchObject({ removed: [], kept: expect.stringContaining('the run is in use') });
    await held.release();

    const dry = await pruneRuns(store, { keep: 0, dryRun: true });
    expect(dry.blobs.removed.sort()).toEqual([path.basename(partial), path.basename(oldBlob)].sort());
    expect(blobFiles(dir)).toHaveLength(3);

    const pruned = await pruneRuns(store, { keep: 0 });
    expect(pruned.removed).toHaveLength(1);
    expect(pruned.blobs).toEqual({ removed: [path.basename(partial), path.basename(oldBlob)].sort(), bytes: 20_000 + 'half a picture'.length, kept: null });
    expect(blobFiles(dir)).toEqual([currentBlob]);
    const view = foldJournal(store.location, await store.load());
    expect(imageOf(view.ledger.get('toolu_1'))).toEqual(imageBlock(current.data));
  });
});

describe('history and the visualizer name the payload, never its base64', () => {
  it('history notes "[image image/png 1.0 MB]" on the record that wrote it, --transcript on the result, the visualizer page too', async () => {
    const dir = tempDir();
    const store = new FileStore(stateDir(dir));
    await startRun({ store, model: scriptedModel(script(3)), tools: [screenTool()], task: 't', maxTurns: 3 });
    const steps = await readRunHistory(store);
    expect(steps.filter((step) => step.payloads.length)).toEqual([
      expect.objectContaining({ event: 'TOOL_RESULT', payloads: [{ tool_use_id: 'toolu_1', name: 'screenshot', payloads: [{ kind: 'image', source: 'base64', mediaType: 'image/png', bytes: 1024 * 1024 }] }] }),
    ]);
    const sample = SCREEN_BASE64.slice(10_000, 10_060);
    for (const transcript of [false, true]) {
      const out: string[] = [];
      await historyCommand({ command: 'history', dir, dirGiven: true, json: false, databaseUrl: null, runId: null, transcript, full: true }, { out: (line) => out.push(line), err: () => {} });
      const text = out.join('\n');
      expect(text).toContain(transcript ? 'screenshot toolu_1: the screen: [image image/png 1.0 MB]' : 'toolu_1 screenshot: [image image/png 1.0 MB]');
      expect(text).not.toContain(sample);
    }
    const json: string[] = [];
    await historyCommand({ command: 'history', dir, dirGiven: true, json: true, databaseUrl: null, runId: null, transcript: false, full: false }, { out: (line) => json.push(line), err: () => {} });
    expect(json.join('\n')).not.toContain(sample);

    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    await startRun({ store: new FileStore(stateDir(tempDir())), model: scriptedModel(script(2)), tools: [screenTool()], task: 't', tracer, traceContent: true });
    const traced = exporter.getFinishedSpans().find((span) => span.name === 'execute_tool screenshot')!;
    expect(String(traced.attributes['gen_ai.tool.call.result'])).toContain('{"type":"image","source":{"type":"base64","media_type":"image/png","bytes":1048576}}');

    const page = await vizPage(new FileStore(stateDir(dir)), null);
    expect(page.html).toContain('[image image/png 1.0 MB]');
    expect(page.html).not.toContain(sample);
  });
});

describe('MCP tools that answer with images and documents', () => {
  it('an image becomes an image block, a PDF resource a document block, audio a line of text; in a run, the image is kept in a blob', async () => {
    const effects = path.join(tempDir(), 'effects.jsonl');
    const set = await mcpTools({ mcpServers: { cam: stdioServer(effects, { MCP_TEST_IMAGES: '1' }) } });
    try {
      const shot = set.tools.find((tool) => tool.name === 'mcp__cam__screenshot')!;
      expect(shot.readOnly).toBe(true);
      const context = { runId: 'r', toolUseId: 'toolu_9', idempotencyKey: 'k', signal: new AbortController().signal } as never;
      const png = (await shot.run({ bytes: 5000 }, context)) as ContentBlock[];
      expect(png).toEqual([{ type: 'text', text: 'a png of 5000 bytes' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: expect.any(String) } }]);
      expect(Buffer.from((png[1]!.source as { data: string }).data, 'base64').subarray(0, 8).equals(PNG)).toBe(true);
      const pdf = (await shot.run({ bytes: 3000, kind: 'pdf' }, context)) as ContentBlock[];
      expect(pdf[1]).toEqual({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: expect.any(String) }, title: 'file:///report.pdf' });
      const wav = (await shot.run({ bytes: 3000, kind: 'wav' }, context)) as ContentBlock[];
      expect(wav[1]).toEqual({ type: 'text', text: '[audio audio/wav, 3000 bytes, left out: the Messages API takes images (image/jpeg, image/png, image/gif, image/webp) and PDF documents only]' });

      const dir = tempDir();
      const store = new FileStore(stateDir(dir));
      const steps = [toolUseReply([{ id: 'toolu_1', name: 'mcp__cam__screenshot', input: { bytes: 200_000 } }]), endTurnReply('seen')];
      const result = await startRun({ store, model: scriptedModel(steps), tools: set.tools, task: 't' });
      expect(result.status).toBe('done');
      const [blob] = blobFiles(dir);
      expect(fs.statSync(blob!).size).toBe(200_000);
      const outcome = foldJournal(store.location, await store.load()).ledger.get('toolu_1')!;
      expect((imageOf(outcome)!.source as { data: string }).data).toBe(fs.readFileSync(blob!).toString('base64'));
    } finally {
      await set.close();
    }
  });
});
