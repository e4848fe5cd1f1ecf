/**
 * The file store reads a journal a piece at a time (a long run's bytes and its parsed records
 * are never in memory together). Whatever the piece size, the reader must see exactly what it
 * sees reading the file whole: the same records and offsets, the same cut-off end, the same
 * refusal of damage.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { type JournalBytes, readJournal } from '../../src/store/journal/journal-reader.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

async function journalBytes(): Promise<Buffer> {
  const store = new FileStore(path.join(tempDir(), '.durable-agent'));
  const script = [1, 2, 3, 4].map((n) => toolUseReply([{ id: `t${n}`, name: 'lookup', input: { q: 'x'.repeat(n * 300) } }]));
  await startRun({ store, model: scriptedModel([...script, endTurnReply('done')]), tools: countingTools().tools, task: 'look things up' });
  store.close();
  return fs.readFileSync(path.join(store.dir, JOURNAL_FILE));
}

/** A source that hands out copies, as a file does, so nothing can lean on one shared buffer. */
function pieces(buffer: Buffer): JournalBytes {
  return { length: buffer.length, read: (start, length) => Buffer.from(buffer.subarray(start, start + length)) };
}

function outcome(read: () => unknown): unknown {
  try {
    return read();
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

describe('reading a journal in pieces', () => {
  it('gives what reading it whole gives, for every piece size, on intact, cut and damaged journals', async () => {
    const intact = await journalBytes();
    const damaged = Buffer.from(intact);
    const at = Math.floor(intact.length * 0.6);
    damaged[at] = damaged[at]! ^ 0x01;
    const variants: Record<string, Buffer> = {
      intact,
      'cut inside the last record': intact.subarray(0, intact.length - 40),
      'cut inside an earlier record': intact.subarray(0, Math.floor(intact.length * 0.5)),
      'a changed byte': damaged,
      'garbage without a newline': Buffer.concat([intact, Buffer.from('x'.repeat(5000))]),
      'no newline at all': Buffer.from('no header here'),
    };
    const wholes: Record<string, unknown> = {};
    for (const [name, bytes] of Object.entries(variants)) {
      const whole = (wholes[name] = outcome(() => readJournal('j', bytes)));
      for (const pieceBytes of [1, 2, 7, 64, 333, 1000, 4096]) {
        expect(outcome(() => readJournal('j', pieces(bytes), { pieceBytes })), `${name}, pieces of ${pieceBytes}`).toEqual(whole);
      }
    }
    // The variants cover each way a read ends.
    expect(wholes.intact).toMatchObject({ cutEnd: null, goodLength: intact.length });
    expect(wholes['cut inside the last record']).toMatch(/^refused: .*record \d+ .*is counted by the commit mark but missing/);
    const cutLast = variants['cut inside the last record']!;
    const accepted = readJournal('j', cutLast, { acceptLostRecord: true });
    expect(accepted).toMatchObject({ cutEnd: { bytes: expect.any(Number), lostCommittedRecord: expect.any(Number) } });
    for (const pieceBytes of [1, 7, 333, 4096]) expect(readJournal('j', pieces(cutLast), { pieceBytes, acceptLostRecord: true })).toEqual(accepted);
    expect(wholes['garbage without a newline']).toMatchObject({ cutEnd: { offset: intact.length, bytes: 5000, lostCommittedRecord: null } });
    expect(wholes['cut inside an earlier record']).toMatch(/^refused: .*are missing/);
    expect(wholes['a changed byte']).toMatch(/^refused: .*checksum mismatch/);
    expect(wholes['no newline at all']).toMatch(/^refused: .*no complete header line/);
  });
});
