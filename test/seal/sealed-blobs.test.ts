/**
 * A sealed run's blobs (the images and documents its tools return): their bytes are sealed with
 * the run key and their names are a hash keyed by it, so the folder holds neither the bytes nor a
 * name that confirms a guess (the SHA-256 of the payload). The run reads them back with its key,
 * exactly; without it the references stay and the content is refused; a moved or damaged blob is
 * refused whole; a plain run keeps its plain blobs; a sealed run written before blobs were sealed
 * (plain blobs under sealed records) still reads.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContentBlock, ToolOutcome } from '../../machines/agent-loop.types.ts';
import { forkRun } from '../../src/fork/fork-run.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { pruneBlobs } from '../../src/prune/prune-blobs.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { readRunTranscript } from '../../src/runtime/run-transcript.ts';
import { isSealedBlobName } from '../../src/seal/blob-seal.ts';
import { KeyRing } from '../../src/seal/keys.ts';
import { KeyNotGivenError, SealedValueError } from '../../src/seal/seal-errors.ts';
import { BLOBS_DIR, BlobReferences, blobFilesOf } from '../../src/store/blobs.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { folderText } from '../helpers/folder-text.ts';

const SECRET = 'PASSPORT OF ANA ORTEGA, NUMBER X4471';
/** A PNG's first bytes, then the secret again and again: 4 KB, kept in a blob. */
const PICTURE = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(`${SECRET} `.repeat(110), 'latin1')]);
const PLAIN_NAME = `sha256-${createHash('sha256').update(PICTURE).digest('hex')}`;
const ring = () => KeyRing.of([{ id: 'k1', key: randomBytes(32) }]);

const scanTool = defineTool({
  name: 'scan',
  description: 'Scans the document on the glass.',
  readOnly: true,
  inputSchema: { type: 'object' },
  run: () => [{ type: 'text', text: 'the scan:' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PICTURE.toString('base64') } }],
});

const script = () => [toolUseReply([{ id: 'toolu_scan1', name: 'scan', input: {} }], 'Scanning.'), toolUseReply([{ id: 'toolu_scan2', name: 'scan', input: {} }], 'Once more.'), endTurnReply('Scanned.')];


function scannedImage(outcome: ToolOutcome | undefined): ContentBlock | undefined {
  return Array.isArray(outcome?.content) ? outcome.content.find((block) => block.type === 'image') : undefined;
}

async function sealedRun(keys: KeyRing, stopAfterFirst = false): Promise<string> {
  const dir = path.join(tempDir('da-sealed-blobs-'), '.durable-agent');
  const run = startRun({ store: new FileStore(dir), keys, model: scriptedModel(script()), tools: [scanTool], task: 'Scan the passport', ...(stopAfterFirst ? { crashAfter: 'after-effect-write:1' } : {}) });
  if (stopAfterFirst) await expect(run).rejects.toMatchObject({ name: 'SimulatedCrash' });
  else expect((await run).status).toBe('done');
  return dir;
}

describe('a sealed run that keeps a blob', () => {
  it('writes its bytes sealed under a keyed name; reads them back whole with its key, and leaves the reference without it', async () => {
    const keys = ring();
    const dir = await sealedRun(keys, true);
    const files = blobFilesOf(dir);
    expect(files).toHaveLength(1);
    expect(isSealedBlobName(files[0]!.name)).toBe(true);
    const text = folderText(dir);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(PLAIN_NAME);
    expect(text).not.toContain(PLAIN_NAME.slice('sha256-'.length));
    expect(text).not.toContain(PICTURE.toString('base64').slice(0, 200));

    // Resumed with the key: the blob is read back, and the second scan (the same bytes) reuses its name.
    const resumed = await resumeRun({ store: new FileStore(dir), keys, model: scriptedModel(script()), tools: [scanTool] });
    expect(resumed.status).toBe('done');
    expect(blobFilesOf(dir).map((file) => file.name)).toEqual([files[0]!.name]);
    const loaded = await new FileStore(dir, { keys }).load();
    const view = foldJournal(dir, loaded);
    const image = scannedImage(view.ledger.get('toolu_scan1'));
    expect(image).toMatchObject({ source: { type: 'base64', data: PICTURE.toString('base64') } });
    expect(folderText(dir)).not.toContain(SECRET);

    // Without the key: what finds the run reads, the reference stays, the content is refused naming the key.
    const unkeyed = await new FileStore(dir).load();
    expect(unkeyed.contentRefused).toBeInstanceOf(KeyNotGivenError);
    expect(JSON.stringify(unkeyed.records.map((stored) => stored.record))).toContain(files[0]!.name);
    expect(foldJournal(dir, unkeyed).state).toBe('done');
    await expect(readRunTranscript(new FileStore(dir))).rejects.toBeInstanceOf(KeyNotGivenError);
  });

  it('gives the same bytes another name in another run (a name says nothing across runs either)', async () => {
    const keys = ring();
    const [first, second] = [await sealedRun(keys), await sealedRun(keys)];
    expect(blobFilesOf(first)[0]!.name).not.toBe(blobFilesOf(second)[0]!.name);
  });

  it('refuses a blob moved to another name or damaged, whole', async () => {
    const keys = ring();
    const dir = await sealedRun(keys);
    const blobs = path.join(dir, BLOBS_DIR);
    const [name] = fs.readdirSync(blobs);
    const file = path.join(blobs, name!);
    const bytes = fs.readFileSync(file);
    const damaged = Buffer.from(bytes);
    damaged[damaged.length - 40]! ^= 1;
    fs.writeFileSync(file, damaged);
    await expect(new FileStore(dir, { keys }).load()).rejects.toBeInstanceOf(SealedValueError);

    // The bytes of another blob of the run, under this name: their tag binds their own name.
    const other = await sealedRun(keys);
    const otherBytes = fs.readFileSync(path.join(other, BLOBS_DIR, fs.readdirSync(path.join(other, BLOBS_DIR))[0]!));
    fs.writeFileSync(file, otherBytes);
    await expect(new FileStore(dir, { keys }).load()).rejects.toThrow(/sealed|not given/);
    fs.writeFileSync(file, bytes);
    expect((await new FileStore(dir, { keys }).load()).records.length).toBeGreaterThan(0);
  });

  it('is kept by a prune of the blobs no journal refers to (its name is read without the key)', async () => {
    const dir = await sealedRun(ring());
    fs.writeFileSync(path.join(dir, BLOBS_DIR, `hmac-${'0'.repeat(64)}`), 'a blob no record names');
    const sweep = await pruneBlobs(new FileStore(dir), false);
    expect(sweep.removed).toEqual([`hmac-${'0'.repeat(64)}`]);
    expect(blobFilesOf(dir)).toHaveLength(1);
  });
});

describe('blobs of runs that are not sealed, or sealed before blobs were', () => {
  it('a plain run keeps its blob under the SHA-256 of its bytes, as ever', async () => {
    const dir = path.join(tempDir('da-plain-blobs-'), '.durable-agent');
    expect((await startRun({ store: new FileStore(dir), model: scriptedModel(script()), tools: [scanTool], task: 'Scan the passport' })).status).toBe('done');
    expect(blobFilesOf(dir).map((file) => file.name)).toEqual([PLAIN_NAME]);
  });

  it('a sealed run whose blobs were written plain by an earlier release still reads and resumes', async () => {
    const keys = ring();
    const dir = path.join(tempDir('da-old-sealed-blobs-'), '.durable-agent');
    const store = new FileStore(dir);
    // The earlier release: records sealed, blobs plain (named by their SHA-256).
    (store.blobs as unknown as { references: BlobReferences }).references = new BlobReferences(store.blobs);
    await expect(startRun({ store, keys, model: scriptedModel(script()), tools: [scanTool], task: 'Scan the passport', crashAfter: 'after-effect-write:1' })).rejects.toMatchObject({ name: 'SimulatedCrash' });
    expect(blobFilesOf(dir).map((file) => file.name)).toEqual([PLAIN_NAME]);
    expect(fs.readFileSync(path.join(dir, 'journal.jsonl'), 'utf8')).toContain('"sealed":"rk-');

    const resumed = await resumeRun({ store: new FileStore(dir), keys, model: scriptedModel(script()), tools: [scanTool] });
    expect(resumed.status).toBe('done');
    const view = foldJournal(dir, await new FileStore(dir, { keys }).load());
    expect(scannedImage(view.ledger.get('toolu_scan1'))).toMatchObject({ source: { data: PICTURE.toString('base64') } });
    expect(scannedImage(view.ledger.get('toolu_scan2'))).toMatchObject({ source: { data: PICTURE.toString('base64') } });
    // What the resume wrote is sealed: the second scan's bytes went to a sealed blob.
    expect(blobFilesOf(dir).some((file) => isSealedBlobName(file.name))).toBe(true);
  });
});

describe('a fork of a sealed run given as directories, with the keys', () => {
  it('is sealed under the first key, with its blobs sealed under its own run key; refused without the keys, nothing written', async () => {
    const k1 = randomBytes(32);
    const parentKeys = KeyRing.of([{ id: 'k1', key: k1 }]);
    const parent = await sealedRun(parentKeys);
    const parentDir = path.dirname(parent);
    const root = tempDir('da-sealed-fork-dirs-');
    const refused = await forkRun({ from: parentDir, to: path.join(root, 'unkeyed'), at: 3 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(KeyNotGivenError);
    expect(refused).toMatchObject({ keyId: 'k1' });
    expect(fs.existsSync(path.join(root, 'unkeyed', '.durable-agent', 'journal.jsonl'))).toBe(false);

    const keys = KeyRing.of([
      { id: 'k2', key: randomBytes(32) },
      { id: 'k1', key: k1 },
    ]);
    const forked = await forkRun({ from: parentDir, to: path.join(root, 'child'), keys });
    const child = path.join(root, 'child', '.durable-agent');
    expect(JSON.parse(fs.readFileSync(path.join(child, 'run-key.json'), 'utf8')).master).toBe('k2');
    const blobs = blobFilesOf(child);
    expect(blobs).toHaveLength(1);
    expect(isSealedBlobName(blobs[0]!.name)).toBe(true);
    expect(blobs[0]!.name).not.toBe(blobFilesOf(parent)[0]!.name);
    expect(folderText(child)).not.toContain(SECRET);
    const view = foldJournal(child, await new FileStore(child, { keys }).load());
    expect(view.state).toBe(forked.state);
    expect(scannedImage(view.ledger.get('toolu_scan1'))).toMatchObject({ source: { data: PICTURE.toString('base64') } });
  });
});
