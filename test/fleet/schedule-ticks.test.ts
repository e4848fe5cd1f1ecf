/**
 * When a schedule ticks and which due ticks start a run: time zones across a change of summer
 * time, the seconds field, the catch-up of missed ticks, overlap, a very long gap, and the ids of
 * tick runs (valid run ids, one per tick).
 */
import { describe, expect, it } from 'vitest';
import { ScheduleCronError } from '../../src/fleet/schedule-errors.ts';
import { checkTickRule, dueTicks, MISSED_AFTER_MS, nextTickAfter, tickRunId } from '../../src/fleet/schedule-ticks.ts';
import { checkRunId } from '../../src/store/run-id.ts';

const at = (iso: string) => new Date(iso);
const iso = (dates: readonly Date[]) => dates.map((date) => date.toISOString());

describe('schedule ticks', () => {
  it('reads the expression in its time zone, across the change to summer time', () => {
    const weekdays = { cron: '0 9 * * 1-5', timezone: 'Europe/Paris' };
    // Friday 27 March 2026, 09:00 in Paris is 08:00 UTC (winter); the next is Monday 30 March, 09:00 summer time.
    expect(nextTickAfter(weekdays, at('2026-03-27T08:00:00Z'))?.toISOString()).toBe('2026-03-30T07:00:00.000Z');
    expect(nextTickAfter({ cron: '0 9 * * 1-5', timezone: 'UTC' }, at('2026-03-27T08:00:00Z'))?.toISOString()).toBe('2026-03-27T09:00:00.000Z');
  });

  it('takes a seconds field first', () => {
    expect(nextTickAfter({ cron: '*/10 * * * * *', timezone: 'UTC' }, at('2026-12-07T04:00:03Z'))?.toISOString()).toBe('2026-12-07T04:00:10.000Z');
  });

  it('refuses an expression or a zone it cannot use, saying what to give', () => {
    for (const rule of [
      { cron: 'every morning', timezone: 'UTC' },
      { cron: '0 25 * * *', timezone: 'UTC' },
      { cron: '0 9 * * *', timezone: 'Mars/Olympus' },
    ]) {
      const refused = (() => {
        try {
          checkTickRule(rule, at('2026-12-07T00:00:00Z'));
        } catch (error) {
          return error;
        }
        return null;
      })();
      expect(refused).toBeInstanceOf(ScheduleCronError);
      expect((refused as ScheduleCronError).message).toContain('IANA time zone');
      expect((refused as ScheduleCronError).kind).toBe('refused');
    }
  });

  it('starts a tick on time; of the missed ones, the latest catchUp; skips the rest', () => {
    const minutely = { cron: '0 * * * * *', timezone: 'UTC', overlap: true };
    const now = at('2026-12-07T10:00:20Z');
    const from = at('2026-12-07T09:55:00Z');
    // 09:55 … 09:59 were missed (due over a minute ago); 10:00 is on time.
    expect(dueTicks({ ...minutely, catchUp: 2 }, from, now)).toEqual({
      start: [at('2026-12-07T09:58:00Z'), at('2026-12-07T09:59:00Z'), at('2026-12-07T10:00:00Z')],
      skipped: 3,
      next: at('2026-12-07T10:01:00Z'),
    });
    expect(iso(dueTicks({ ...minutely, catchUp: 0 }, from, now).start)).toEqual(['2026-12-07T10:00:00.000Z']);
    expect(dueTicks({ ...minutely, catchUp: 0 }, from, now).skipped).toBe(5);
    expect(dueTicks({ ...minutely, catchUp: 100 }, from, now).start).toHaveLength(6);
    // Missed by exactly MISSED_AFTER_MS: missed.
    expect(dueTicks({ ...minutely, catchUp: 0 }, at('2026-12-07T10:00:00Z'), new Date(at('2026-12-07T10:00:00Z').getTime() + MISSED_AFTER_MS)).start).toEqual([at('2026-12-07T10:01:00Z')]);
    // The latest tick alone, fired over a minute late: missed, started only as a catch-up.
    const hourly = { cron: '0 0 * * * *', timezone: 'UTC', overlap: true };
    expect(dueTicks({ ...hourly, catchUp: 0 }, at('2026-12-07T10:00:00Z'), at('2026-12-07T10:01:30Z')).start).toEqual([]);
    expect(dueTicks({ ...hourly, catchUp: 1 }, at('2026-12-07T10:00:00Z'), at('2026-12-07T10:01:30Z')).start).toEqual([at('2026-12-07T10:00:00Z')]);
    expect(dueTicks({ ...hourly, catchUp: 0 }, at('2026-12-07T10:00:00Z'), at('2026-12-07T10:00:59Z')).start).toEqual([at('2026-12-07T10:00:00Z')]);
  });

  it('every ten seconds, no worker for three minutes, catch up 1: one run for the missed ticks, and the tick on time', () => {
    const due = dueTicks({ cron: '*/10 * * * * *', timezone: 'UTC', overlap: true, catchUp: 1 }, at('2026-12-07T10:00:00Z'), at('2026-12-07T10:03:04Z'));
    // 10:00:00 … 10:02:50 missed (a later tick was due too); 10:03:00 on time.
    expect(iso(due.start)).toEqual(['2026-12-07T10:02:50.000Z', '2026-12-07T10:03:00.000Z']);
    expect(due.skipped).toBe(17);
    expect(dueTicks({ cron: '*/10 * * * * *', timezone: 'UTC', overlap: true, catchUp: 0 }, at('2026-12-07T10:00:00Z'), at('2026-12-07T10:03:04Z')).start).toEqual([at('2026-12-07T10:03:00Z')]);
  });

  it('without overlap, starts one run at most: the latest tick', () => {
    const due = dueTicks({ cron: '0 * * * * *', timezone: 'UTC', overlap: false, catchUp: 5 }, at('2026-12-07T09:55:00Z'), at('2026-12-07T10:00:20Z'));
    expect(iso(due.start)).toEqual(['2026-12-07T10:00:00.000Z']);
    expect(due.skipped).toBe(5);
  });

  it('nothing due before the first tick', () => {
    expect(dueTicks({ cron: '0 9 * * *', timezone: 'UTC', overlap: true, catchUp: 1 }, at('2026-12-08T09:00:00Z'), at('2026-12-07T10:00:00Z'))).toEqual({ start: [], skipped: 0, next: at('2026-12-08T09:00:00Z') });
  });

  it('after a month without workers, a per-second schedule looks at a window before the firing only, and still catches up', () => {
    const due = dueTicks({ cron: '* * * * * *', timezone: 'UTC', overlap: true, catchUp: 3 }, at('2026-11-07T10:00:00Z'), at('2026-12-07T10:00:00Z'));
    // The three latest missed (each with a later tick due), then the one on time.
    expect(iso(due.start)).toEqual(['2026-12-07T09:59:57.000Z', '2026-12-07T09:59:58.000Z', '2026-12-07T09:59:59.000Z', '2026-12-07T10:00:00.000Z']);
    // At least the missed ticks of the window, and one for those before it (a count from below).
    expect(due.skipped).toBeGreaterThanOrEqual(10 * 60 - 3 + 1);
  });

  it('names each tick run after its schedule and tick: a valid run id, one per tick', () => {
    const id = tickRunId('morning-report', at('2026-12-07T08:00:00Z'));
    expect(id).toBe('morning-report.20261207T080000Z');
    expect(checkRunId(id)).toBe(id);
    expect(tickRunId('a'.repeat(80), at('2026-12-07T08:00:09Z'))).toHaveLength(97);
    expect(tickRunId('s', at('2026-12-07T08:00:09Z'))).not.toBe(tickRunId('s', at('2026-12-07T08:00:10Z')));
  });
});
