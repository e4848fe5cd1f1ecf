import { describe, expect, it } from 'vitest';
import { CallDeadlines } from '../../src/tools/call-deadlines.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('call deadlines on one timer', () => {
  it('fires each deadline once, in the order they fall due, whatever order they were added in', async () => {
    const deadlines = new CallDeadlines();
    const fired: string[] = [];
    deadlines.add(60, () => fired.push('late'));
    deadlines.add(10, () => fired.push('early'));
    deadlines.add(30, () => fired.push('middle'));
    await sleep(150);
    expect(fired).toEqual(['early', 'middle', 'late']);
  });

  it('a cleared deadline never fires; the others still do', async () => {
    const deadlines = new CallDeadlines();
    const fired: string[] = [];
    const first = deadlines.add(10, () => fired.push('cleared'));
    deadlines.add(20, () => fired.push('kept'));
    deadlines.clear(first);
    deadlines.clear(first);
    await sleep(100);
    expect(fired).toEqual(['kept']);
  });

  it('a deadline added after every earlier one was cleared still fires', async () => {
    const deadlines = new CallDeadlines();
    const fired: string[] = [];
    for (let i = 0; i < 50; i++) deadlines.clear(deadlines.add(5, () => fired.push(`cleared ${i}`)));
    deadlines.add(15, () => fired.push('last'));
    await sleep(100);
    expect(fired).toEqual(['last']);
  });

  it('an expiry that adds a deadline gets it fired too', async () => {
    const deadlines = new CallDeadlines();
    const fired: string[] = [];
    deadlines.add(5, () => {
      fired.push('first');
      deadlines.add(5, () => fired.push('second'));
    });
    await sleep(100);
    expect(fired).toEqual(['first', 'second']);
  });

  it('holds the process only while a deadline is pending', () => {
    const deadlines = new CallDeadlines();
    const deadline = deadlines.add(60_000, () => {});
    const timer = (deadlines as unknown as { timer: NodeJS.Timeout }).timer;
    expect(timer.hasRef()).toBe(true);
    deadlines.clear(deadline);
    expect(timer.hasRef()).toBe(false);
    const again = deadlines.add(60_000, () => {});
    expect(timer.hasRef()).toBe(true);
    deadlines.clear(again);
  });
});
