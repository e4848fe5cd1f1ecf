/**
 * The bench's disk diagnostic: each gap's appends are fdatasynced one by one after that gap,
 * and the report names every gap with its median ÷ the back-to-back one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fsyncGapLines, measureFsyncGaps } from '../../bench/fsync-gap.ts';
import { tempDir } from '../helpers/temp-dir.ts';

afterEach(() => vi.restoreAllMocks());

describe('fdatasync cost by the gap before it', () => {
  it('times one fdatasync per append, for each gap asleep and computing, and leaves no file behind', () => {
    const dir = path.join(tempDir(), 'gaps');
    const syncs = vi.spyOn(fs, 'fdatasyncSync');
    const started = performance.now();
    const figures = measureFsyncGaps(dir, { appends: 6, rounds: 2, gapsMs: [0, 2], bytes: 100 });
    expect(figures.map((figure) => [figure.gapMs, figure.mode, figure.appends])).toEqual([
      [0, 'idle', 6],
      [2, 'idle', 6],
      [2, 'busy', 6],
    ]);
    expect(syncs).toHaveBeenCalledTimes(18);
    // Each gapped append waited its gap first.
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * 12);
    for (const figure of figures) {
      expect(figure.p10SyncMs).toBeLessThanOrEqual(figure.medianSyncMs);
      expect(figure.medianSyncMs).toBeLessThanOrEqual(figure.p90SyncMs);
      expect(figure.medianSyncMs).toBeGreaterThan(0);
    }
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('reports every gap against the back-to-back median', () => {
    const lines = fsyncGapLines([
      { gapMs: 0, mode: 'idle', appends: 3, medianSyncMs: 0.2, p10SyncMs: 0.1, p90SyncMs: 0.3 },
      { gapMs: 1, mode: 'idle', appends: 3, medianSyncMs: 0.5, p10SyncMs: 0.4, p90SyncMs: 0.9 },
      { gapMs: 1, mode: 'busy', appends: 3, medianSyncMs: 0.6, p10SyncMs: 0.5, p90SyncMs: 1 },
    ]);
    expect(lines).toEqual([
      "  back to back (the raw floor's schedule): 0.200 ms (0.100-0.300), 1.00×",
      '  after 1 ms  asleep: 0.500 ms (0.400-0.900), 2.50×;  computing: 0.600 ms (0.500-1.000), 3.00×',
    ]);
  });
});
