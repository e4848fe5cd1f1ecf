/**
 * A program's keys (StartOptions.keys, ResumeOptions.keys) reach the file store: a ring or a
 * hook (a KMS holding the master key) seals the run it starts under a run key of its own, kept
 * beside the journal; the run resumes with them and is refused without them, naming the key; a
 * fork of a sealed run is sealed under the child's own run key; a store that cannot seal refuses
 * keys; a run started plain stays plain.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkRun } from '../../src/fork/fork-run.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { readRunTranscript } from '../../src/runtime/run-transcript.ts';
import { type KeyHook, KeyRing } from '../../src/seal/keys.ts';
import { KeyNotGivenError, SealingUnsupportedError } from '../../src/seal/seal-errors.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { pruneRuns } from '../../src/prune/prune-archive.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { folderText } from '../helpers/folder-text.ts';

const ring = (id: string) => KeyRing.of([{ id, key: randomBytes(32) }]);
const TASK = 'Send Ana Ortega the balance of account 4471';

const script = () => [
  toolUseReply([{ id: 'toolu_a', name: 'lookup', input: { q: 'balance of account 4471' } }], 'Looking up the balance of Ana Ortega.'),
  toolUseReply([{ id: 'toolu_b', name: 'send_email', input: { to: 'ana.ortega@example.com' } }], 'Writing to Ana.'),
  endTurnReply('Ana Ortega was told her balance.'),
];
const SECRETS = ['Ana Ortega', 'account 4471', 'ana.ortega@example.com', 'answer to balance'];


/** A stand-in for a KMS: it holds its master key and hands out only wraps. */
function fakeKms(id: string): KeyHook & { calls: string[] } {
  const master = randomBytes(32);
  const calls: string[] = [];
  return {
    sealingKeyId: id,
    calls,
    async seal(dataKey, { runKey }) {
      calls.push(`seal ${runKey}`);
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', master, iv);
      cipher.setAAD(Buffer.from(runKey));
      const data = Buffer.concat([iv, cipher.update(dataKey), cipher.final(), cipher.getAuthTag()]);
      return { key: id, data: data.toString('base64') };
    },
    async open(wrapped, { runKey }) {
      calls.push(`open ${runKey}`);
      const data = Buffer.from(wrapped.data, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', master, data.subarray(0, 12));
      decipher.setAAD(Buffer.from(runKey));
      decipher.setAuthTag(data.subarray(data.length - 16));
      return Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]);
    },
  };
}

describe.each([
  ['a key ring', () => ring('k1'), 0],
  ['a key ring, a snapshot every 2 records (a resume reads from the last one)', () => ring('k1'), 2],
  ['a hook (a KMS holds the master key)', () => fakeKms('arn:aws:kms:eu-west-1:111122223333:key/demo'), 0],
])('a run started with %s', (_, keysOf, snapshotEvery) => {
  it('is sealed on disk, resumes with the keys after a crash (the effect once), and is refused without them', async () => {
    const keys = keysOf();
    const dir = path.join(tempDir('da-sealed-'), '.durable-agent');
    const { tools, counter } = countingTools();
    const crashed = await startRun({ store: new FileStore(dir), keys, model: scriptedModel(script()), tools, task: TASK, snapshotEvery, crashAfter: 'after-effect-write:2' }).catch((error: Error) => error);
    expect(crashed).toMatchObject({ name: 'SimulatedCrash' });
    expect(fs.existsSync(path.join(dir, 'run-key.json'))).toBe(true);
    for (const secret of SECRETS) expect(folderText(dir)).not.toContain(secret);
    expect(fs.readFileSync(path.join(dir, 'journal.jsonl'), 'utf8').includes('"snapshot":')).toBe(snapshotEvery > 0);

    const refused = await resumeRun({ store: new FileStore(dir), model: scriptedModel(script()), tools }).catch((error: Error) => error);
    expect(refused).toBeInstanceOf(KeyNotGivenError);
    await expect(readRunTranscript(new FileStore(dir))).rejects.toBeInstanceOf(KeyNotGivenError);

    const resumed = await resumeRun({ store: new FileStore(dir), keys, model: scriptedModel(script()), tools, snapshotEvery });
    expect(resumed.status).toBe('done');
    expect(counter.of('toolu_b')).toBe(1);
    for (const secret of SECRETS) expect(folderText(dir)).not.toContain(secret);
    const keyed = new FileStore(dir);
    keyed.giveKeys(keys);
    const { entries } = await readRunTranscript(keyed);
    expect(JSON.stringify(entries)).toContain(TASK);
  });
});

describe('a fork of a sealed run', () => {
  it('is sealed under a run key of its own, and refused without keys', async () => {
    const keys = ring('k1');
    const root = tempDir('da-sealed-fork-');
    const parent = new FileStore(path.join(root, 'parent', '.durable-agent'), { keys });
    const { tools } = countingTools();
    expect((await startRun({ store: parent, model: scriptedModel(script()), tools, task: TASK })).status).toBe('done');

    const refused = await forkRun({ from: new FileStore(parent.dir), to: new FileStore(path.join(root, 'unkeyed', '.durable-agent')), at: 3 }).catch((error: Error) => error);
    expect(refused).toBeInstanceOf(KeyNotGivenError);
    expect(fs.existsSync(path.join(root, 'unkeyed', '.durable-agent', 'journal.jsonl'))).toBe(false);

    const child = new FileStore(path.join(root, 'child', '.durable-agent'), { keys });
    const forked = await forkRun({ from: parent, to: child, at: 3 });
    const childKey = JSON.parse(fs.readFileSync(path.join(child.dir, 'run-key.json'), 'utf8')).key;
    expect(childKey).not.toBe(JSON.parse(fs.readFileSync(path.join(parent.dir, 'run-key.json'), 'utf8')).key);
    for (const secret of SECRETS) expect(folderText(child.dir)).not.toContain(secret);
    const loaded = await new FileStore(child.dir, { keys }).load();
    expect(loaded.header).toMatchObject({ runId: forked.runId, sealed: childKey });
    expect(JSON.stringify(loaded.records.map((stored) => stored.record))).toContain(TASK);
  });
});

describe('an archived sealed run', () => {
  it('keeps its key beside its archived journal, the next run gets its own, and a prune removes both', async () => {
    const keys = ring('k1');
    const dir = path.join(tempDir('da-sealed-archive-'), '.durable-agent');
    const { tools } = countingTools();
    expect((await startRun({ store: new FileStore(dir), keys, model: scriptedModel(script()), tools, task: TASK })).status).toBe('done');
    const first = JSON.parse(fs.readFileSync(path.join(dir, 'run-key.json'), 'utf8')).key;
    expect((await startRun({ store: new FileStore(dir), keys, model: scriptedModel(script()), tools, task: 'Another task', fresh: true })).status).toBe('done');
    const archive = path.join(dir, 'archive');
    const archivedKeys = fs.readdirSync(archive).filter((name) => name.endsWith('.run-key.json'));
    expect(archivedKeys).toHaveLength(1);
    expect(JSON.parse(fs.readFileSync(path.join(archive, archivedKeys[0]!), 'utf8')).key).toBe(first);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'run-key.json'), 'utf8')).key).not.toBe(first);
    const report = await pruneRuns(new FileStore(dir), { olderThanMs: 0 });
    expect(report.removed).toHaveLength(1);
    expect(fs.readdirSync(archive).filter((name) => name.includes('journal-'))).toEqual([]);
  });
  it('keeps its key when the archive is cut off right after the journal moved: the next run’s key replaces no copy of it', async () => {
    const keys = ring('k1');
    const dir = path.join(tempDir('da-sealed-archive-cut-'), '.durable-agent');
    const { tools } = countingTools();
    expect((await startRun({ store: new FileStore(dir), keys, model: scriptedModel(script()), tools, task: TASK })).status).toBe('done');
    const first = JSON.parse(fs.readFileSync(path.join(dir, 'run-key.json'), 'utf8')).key;
    const cut = new FileStore(dir, {
      onArchivePoint: () => {
        throw new Error('cut off here');
      },
    });
    await expect(startRun({ store: cut, keys, model: scriptedModel(script()), tools, task: 'Another task', fresh: true })).rejects.toThrow('cut off here');
    // What a kill there leaves: the journal archived, no journal in the folder; then the next run.
    expect(fs.existsSync(path.join(dir, JOURNAL_FILE))).toBe(false);
    expect((await startRun({ store: new FileStore(dir), keys, model: scriptedModel(script()), tools, task: 'Another task' })).status).toBe('done');
    const archive = path.join(dir, 'archive');
    const archivedJournals = fs.readdirSync(archive).filter((name) => /^journal-.*\.jsonl$/.test(name));
    expect(archivedJournals).toHaveLength(1);
    const keyFile = path.join(archive, archivedJournals[0]!.replace(/\.jsonl$/, '.run-key.json'));
    expect(JSON.parse(fs.readFileSync(keyFile, 'utf8')).key).toBe(first);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'run-key.json'), 'utf8')).key).not.toBe(first);
  });
});

describe('keys and stores', () => {
  it('a store that does not seal refuses keys, nothing started', async () => {
    const { tools } = countingTools();
    const refused = await startRun({ store: new MemoryStore(), keys: ring('k1'), model: scriptedModel(script()), tools, task: TASK }).catch((error: Error) => error);
    expect(refused).toBeInstanceOf(SealingUnsupportedError);
  });

  it('a run started plain stays plain when resumed with keys', async () => {
    const dir = path.join(tempDir('da-plain-'), '.durable-agent');
    const { tools } = countingTools();
    await startRun({ store: new FileStore(dir), model: scriptedModel(script()), tools, task: TASK, crashAfter: 'after-effect-write:2' }).catch(() => null);
    expect((await resumeRun({ store: new FileStore(dir), keys: ring('k1'), model: scriptedModel(script()), tools })).status).toBe('done');
    expect(fs.existsSync(path.join(dir, 'run-key.json'))).toBe(false);
    expect(folderText(dir)).toContain('Ana Ortega');
    expect(folderText(dir)).not.toContain('sealed:1:');
  });
});
