/**
 * The wait for a sub-agent child this process still drives: it ends when no child is left at that
 * place, or when the call stops, and it leaves nothing on the call's signal, which outlives it.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { childHereEnded, drivingChildHere } from '../../src/subagent/children-here.ts';

function deferred(): { promise: Promise<string>; resolve: (value: string) => void; reject: (error: Error) => void } {
  let resolve!: (value: string) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<string>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('childHereEnded', () => {
  it('returns at once when no child of this process lives there, without listening to the signal', async () => {
    const signal = new AbortController().signal;
    await childHereEnded('/runs/none', signal);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('waits through each child driven there in turn, and leaves no listener on the signal', async () => {
    const first = deferred();
    const second = deferred();
    const signal = new AbortController().signal;
    const firstRun = drivingChildHere('/runs/a', () => first.promise);
    let ended = false;
    const wait = childHereEnded('/runs/a', signal).then(() => {
      ended = true;
    });
    expect(getEventListeners(signal, 'abort')).toHaveLength(1);
    // A second child at the same place starts before the first ends: the wait goes on for it.
    const secondRun = drivingChildHere('/runs/a', () => second.promise);
    first.reject(new Error('the first child failed'));
    await expect(firstRun).rejects.toThrow('the first child failed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toBe(false);
    second.resolve('done');
    await expect(secondRun).resolves.toBe('done');
    await wait;
    expect(ended).toBe(true);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('ends with the stop of the call, its reason as the error, and removes its listener', async () => {
    const child = deferred();
    const controller = new AbortController();
    const childRun = drivingChildHere('/runs/b', () => child.promise);
    const wait = childHereEnded('/runs/b', controller.signal);
    controller.abort(new Error('the parent run was cancelled'));
    await expect(wait).rejects.toThrow('the parent run was cancelled');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    child.resolve('done');
    await childRun;
  });

  it('refuses at once under a signal already stopped while a child runs there', async () => {
    const child = deferred();
    const childRun = drivingChildHere('/runs/c', () => child.promise);
    await expect(childHereEnded('/runs/c', AbortSignal.abort(new Error('stopped before')))).rejects.toThrow('stopped before');
    child.resolve('done');
    await childRun;
  });
});
