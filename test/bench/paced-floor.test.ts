/**
 * The bench's paced floor (a diagnostic): the raw floor's bytes and fdatasyncs, with the
 * in-memory loop's time spent busy between appends. It must write exactly what the raw floor
 * writes, sync exactly where it syncs, and its overhead must leave the busy time out.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunMeasure } from '../../bench/contenders.ts';
import { loopFigures, loopRatios, type LoopSamples } from '../../bench/figures.ts';
import { appendWithSyncs, type FloorPlan, paceOf } from '../../bench/raw-floor.ts';
import { tempDir } from '../helpers/temp-dir.ts';

afterEach(() => vi.restoreAllMocks());

const plan: FloorPlan = {
  chunks: [Buffer.from('header\nmark\nrecord 0\n'), Buffer.from('record 1\n'), Buffer.from('record 2\n'), Buffer.from('record 3\n')],
  synced: [false, true, true],
};

describe('the paced floor', () => {
  it('writes the raw floor’s bytes with its fdatasyncs, busy for the pace before each piece', () => {
    const root = tempDir();
    const syncs = vi.spyOn(fs, 'fdatasyncSync');
    expect(appendWithSyncs(path.join(root, 'raw'), plan)).toBe(0);
    const rawSyncs = syncs.mock.calls.length;
    syncs.mockClear();
    const busyMs = appendWithSyncs(path.join(root, 'paced'), plan, 2);
    expect(syncs.mock.calls.length).toBe(rawSyncs);
    expect(rawSyncs).toBe(2);
    expect(busyMs).toBeGreaterThanOrEqual(2 * plan.chunks.length);
    const raw = fs.readFileSync(path.join(root, 'raw', 'floor.jsonl'));
    expect(fs.readFileSync(path.join(root, 'paced', 'floor.jsonl')).equals(raw)).toBe(true);
    expect(raw.equals(Buffer.concat(plan.chunks))).toBe(true);
  });

  it('spreads the in-memory run’s time over the pieces', () => {
    expect(paceOf(40, plan)).toBe(10);
  });

  it('is judged apart: its overhead leaves its busy time out, and the raw floor stays what ours is judged against', () => {
    const io = { bytes: 0, syncs: 0, syncMs: 0 };
    const run = (ms: number, busyMs?: number): RunMeasure => ({ ms, cpuMs: ms, io, lastTurn: null, ...(busyMs === undefined ? {} : { busyMs }) });
    const turns = 10;
    const samples: LoopSamples = new Map([
      ['memory', [run(20), run(20), run(20)]],
      ['durable', [run(80), run(80), run(80)]],
      ['floor', [run(20), run(20), run(20)]],
      ['paced', [run(50, 20), run(50, 20), run(50, 20)]],
    ]);
    const ratios = loopRatios(turns, samples);
    expect(ratios.oursOverFloor).toBe(3); // (80 − 20) ÷ 20
    expect(ratios.pacedOverFloor).toBe(1.5); // (50 − 20) ÷ 20
    expect(ratios.oursOverPacedFloor).toBe(2); // 60 ÷ 30
    expect(loopFigures(turns, samples).find((row) => row.contender === 'paced')?.overheadMsPerTurn).toBe(3);
    samples.delete('paced');
    expect(loopRatios(turns, samples)).toMatchObject({ oursOverFloor: 3, pacedOverFloor: null, oursOverPacedFloor: null });
  });
});
