/**
 * The follower's place in a run's records: the resume point lags one record (the record in
 * progress may be cut), and nothing a server sends again is taken twice, in whatever order.
 */
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/client/api-types.ts';
import { RecordCursor } from '../../src/client/record-cursor.ts';

const call = (seq: number, id: string): RunEvent => ({ type: 'tool-call', seq, toolUseId: id, name: 'lookup', input: {} });
const result = (seq: number, id: string): RunEvent => ({ type: 'tool-result', seq, toolUseId: id, isError: false, content: 'ok' });
const take = (cursor: RecordCursor, event: RunEvent) => cursor.take((event as { seq: number }).seq, event);

describe('RecordCursor', () => {
  it('resumes after the record before the one in progress, or after the record it started after', () => {
    const cursor = new RecordCursor(4);
    expect(cursor.complete).toBe(4);
    expect(take(cursor, call(6, 'a'))).toBe(true);
    expect(cursor.complete).toBe(4);
    expect(take(cursor, result(6, 'a'))).toBe(true);
    expect(take(cursor, call(9, 'b'))).toBe(true);
    expect(cursor.complete).toBe(6);
    expect(new RecordCursor(undefined).complete).toBeNull();
  });

  it('takes nothing twice: a whole record again, part of the one in progress in another order, one before where it started', () => {
    const cursor = new RecordCursor(1);
    expect([call(2, 'a'), result(2, 'a'), call(3, 'b')].map((event) => take(cursor, event))).toEqual([true, true, true]);
    // Resent from the resume point (2): record 2 again, record 3's events the other way round, then record 4.
    expect([call(2, 'a'), result(3, 'b'), call(3, 'b'), result(2, 'a'), call(1, 'z'), call(4, 'c')].map((event) => take(cursor, event))).toEqual([false, true, false, false, false, true]);
    expect(cursor.complete).toBe(3);
  });
});
