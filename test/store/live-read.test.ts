/**
 * The reader that takes no lock reads again when it met damage while the file changed under it
 * (a write in progress, e.g. the commit mark caught mid-rewrite), and refuses at once when
 * nothing changed (real damage). The end-to-end case, a real writer process, is in
 * test/process/live-reader.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { StoreCorruptError, StoreVersionError } from '../../src/store/errors.ts';
import { readWhileWritten } from '../../src/store/live-read.ts';

const torn = () => new StoreCorruptError('j', 2, 100, 'the commit mark fails its checksum', 'start');

describe('reading while a writer writes', () => {
  it('reads again when the damage came while the file changed, and returns the consistent read', async () => {
    let version = 0;
    let reads = 0;
    const result = await readWhileWritten(
      () => {
        reads += 1;
        if (reads === 1) {
          version += 1; // the writer rewrote the mark during this read
          throw torn();
        }
        return 'consistent';
      },
      () => Buffer.from(String(version)),
    );
    expect(result).toBe('consistent');
    expect(reads).toBe(2);
  });

  it('refuses at once, after one read, when nothing changed: the damage is real', async () => {
    let reads = 0;
    // At once: with timers that never fire by themselves, a refusal that first waited would hang.
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const error = await readWhileWritten(
        () => {
          reads += 1;
          throw torn();
        },
        () => Buffer.from('same'),
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoreCorruptError);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    expect(reads).toBe(1);
  });

  it('gives up after a few reads if every one meets damage while the file changes', async () => {
    let version = 0;
    let reads = 0;
    const error = await readWhileWritten(
      () => {
        reads += 1;
        version += 1;
        throw torn();
      },
      () => Buffer.from(String(version)),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreCorruptError);
    expect(reads).toBe(5);
  });

  it('does not read again for what no writer causes (another version)', async () => {
    let reads = 0;
    let version = 0;
    const error = await readWhileWritten(
      () => {
        reads += 1;
        version += 1;
        throw new StoreVersionError('j', 7, 1);
      },
      () => Buffer.from(String(version)),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreVersionError);
    expect(reads).toBe(1);
  });
});
