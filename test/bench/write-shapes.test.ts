/**
 * The write-calls figure: each shape writes the raw floor's bytes with the fdatasyncs where our
 * store synced; ours adds the commit mark rewritten in place before each, the proposed shape joins
 * the records up to each fdatasync into one write. Nothing here is timed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { frameCommitMark } from '../../src/store/journal/framing.ts';
import { type FloorPlan, WRITE_SHAPES, writeInShape } from '../../bench/raw-floor.ts';
import { measureWriteShapes, writeShapeLines } from '../../bench/write-shapes.ts';
import { tempDir } from '../helpers/temp-dir.ts';

afterEach(() => vi.restoreAllMocks());

const header = Buffer.from('header\n');
const blankMark = frameCommitMark({ records: 0, bytes: 0 });
// Two one-call turns: four records each, the second and fourth synced (as our store syncs a turn).
const records = Array.from({ length: 8 }, (_, i) => Buffer.from(`record ${i + 1}\n`));
const plan: FloorPlan = {
  chunks: [Buffer.concat([header, blankMark, Buffer.from('record 0\n')]), ...records],
  synced: [false, true, false, true, false, true, false, true],
};

describe('write shapes', () => {
  it('makes 6, 4 and 2 writes a turn with 2 fdatasyncs each, on the same record bytes', () => {
    const root = tempDir();
    const writes = vi.spyOn(fs, 'writeSync');
    const syncs = vi.spyOn(fs, 'fdatasyncSync');
    const counted: Record<string, { writes: number; syncs: number; calls: number; fdatasyncs: number }> = {};
    for (const shape of WRITE_SHAPES) {
      writes.mockClear();
      syncs.mockClear();
      const counts = writeInShape(path.join(root, shape), plan, shape);
      counted[shape] = { ...counts, calls: writes.mock.calls.length - 1, fdatasyncs: syncs.mock.calls.length };
    }
    expect(counted).toEqual({
      ours: { writes: 12, syncs: 4, calls: 12, fdatasyncs: 4 },
      lines: { writes: 8, syncs: 4, calls: 8, fdatasyncs: 4 },
      'one-per-sync': { writes: 4, syncs: 4, calls: 4, fdatasyncs: 4 },
    });
    const whole = Buffer.concat(plan.chunks);
    expect(fs.readFileSync(path.join(root, 'lines', 'floor.jsonl')).equals(whole)).toBe(true);
    expect(fs.readFileSync(path.join(root, 'one-per-sync', 'floor.jsonl')).equals(whole)).toBe(true);
    // Ours differs only in the mark, which counts every record and byte at the end.
    const ours = fs.readFileSync(path.join(root, 'ours', 'floor.jsonl'));
    const mark = frameCommitMark({ records: 9, bytes: whole.length });
    expect(ours.equals(Buffer.concat([header, mark, whole.subarray(header.length + mark.length)]))).toBe(true);
  });

  it('measures one durable run’s bytes in every shape and reports each against the 2-write shape', async () => {
    const figures = await measureWriteShapes(tempDir(), { turns: 3, reps: 2 });
    expect(figures.rows.map((row) => [row.shape, row.syncsPerTurn])).toEqual([
      ['ours', expect.any(Number)],
      ['lines', expect.any(Number)],
      ['one-per-sync', expect.any(Number)],
    ]);
    const [ours, lines, joined] = figures.rows;
    expect(ours!.syncsPerTurn).toBe(joined!.syncsPerTurn);
    expect(ours!.writesPerTurn - lines!.writesPerTurn).toBeCloseTo(ours!.syncsPerTurn, 9);
    expect(joined!.writesPerTurn).toBeLessThan(lines!.writesPerTurn);
    expect(joined!.overOnePerSync).toBe(1);
    expect(joined!.cpuOverOnePerSync).toBe(1);
    expect(writeShapeLines(figures)).toHaveLength(4);
  });
});
