/**
 * When a schedule's ticks fall, and which of the ticks due at a moment start a run. Pure: the
 * cron expression is read by croner (five fields, or six with the seconds first) in the
 * schedule's time zone, and the moment is the database's clock, so that workers whose clocks
 * differ agree on what is due.
 */
import { Cron } from 'croner';
import { ScheduleCronError } from './schedule-errors.ts';

/**
 * A tick is missed when it is fired more than this after its time, or when a later tick is due
 * too (no worker ran between them): it starts a run only as a catch-up. So at most one tick is
 * on time at a firing, whatever the schedule's period.
 */
export const MISSED_AFTER_MS = 60_000;

/**
 * Ticks looked at in one pass: more than the largest catch-up and a minute of per-second ticks.
 * Past it (a per-second schedule after a day without workers), only the ticks of a window before
 * the firing are looked at, widened until it holds the catch-up.
 */
const TICKS_SEEN = 1_500;
const FIRST_WINDOW_MS = 600_000;

const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT']);

/** What decides a schedule's ticks. */
export interface TickRule {
  cron: string;
  timezone: string;
}

/** The cron expression read, or ScheduleCronError. */
function cronOf(rule: TickRule): Cron {
  let cron: Cron;
  try {
    // Checked first: croner takes an unknown zone silently until it is asked for a date.
    new Intl.DateTimeFormat('en-US', { timeZone: rule.timezone });
    // UTC by its offset: croner then needs no time zone arithmetic for each tick (a hundred times faster).
    cron = new Cron(rule.cron, UTC_ZONES.has(rule.timezone) ? { utcOffset: 0, paused: true } : { timezone: rule.timezone, paused: true });
  } catch (error) {
    throw new ScheduleCronError(rule.cron, rule.timezone, error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error));
  }
  return cron;
}

/** Refuses an expression or a zone that cannot be used, or one that never ticks again. */
export function checkTickRule(rule: TickRule, now: Date): Date {
  const next = cronOf(rule).nextRun(now);
  if (!next) throw new ScheduleCronError(rule.cron, rule.timezone, 'it has no tick after now');
  return next;
}

/** The first tick strictly after `after`; null when the expression never ticks again. */
export function nextTickAfter(rule: TickRule, after: Date): Date | null {
  return cronOf(rule).nextRun(after);
}

/** The ticks from `from` (included) to `to` (included), oldest first; null when there are more than `limit`. */
function ticksIn(cron: Cron, from: number, to: number, limit: number): Date[] | null {
  const ticks: Date[] = [];
  // Ticks fall on whole seconds: the one at `from` itself is the next after the second before it.
  let tick = cron.nextRun(new Date(from - 1_000));
  while (tick && tick.getTime() <= to) {
    if (tick.getTime() >= from) {
      if (ticks.length === limit) return null;
      ticks.push(tick);
    }
    tick = cron.nextRun(tick);
  }
  return ticks;
}

/** What a firing does with the ticks due: the ticks that start a run, how many are skipped, and the schedule's next tick. */
export interface DueTicks {
  start: Date[];
  skipped: number;
  next: Date | null;
}

/**
 * The ticks from `from` (the first one not fired) to `now` that start a run: the latest, when it
 * is on time (due less than MISSED_AFTER_MS ago), and of the missed ones the latest `catchUp`.
 * With `overlap` false, one run at most (the latest tick): two started together would overlap.
 */
export function dueTicks(rule: TickRule & { catchUp: number; overlap: boolean }, from: Date, now: Date): DueTicks {
  const cron = cronOf(rule);
  const late = now.getTime() - MISSED_AFTER_MS;
  const start = from.getTime();
  let unseen = 0;
  let ticks = ticksIn(cron, start, now.getTime(), TICKS_SEEN);
  if (!ticks) {
    // Each tick before the window looked at is missed and older than any the catch-up takes.
    unseen = 1;
    ticks = [];
    for (let span = FIRST_WINDOW_MS; ; span *= 4) {
      const from = Math.max(start, late - span);
      const seen = ticksIn(cron, from, now.getTime(), TICKS_SEEN);
      if (!seen) break;
      ticks = seen;
      if (from === start || seen.length > rule.catchUp) break;
    }
  }
  const latest = ticks.at(-1);
  const onTime = latest !== undefined && latest.getTime() > late ? [latest] : [];
  const missed = onTime.length > 0 ? ticks.slice(0, -1) : ticks;
  const caughtUp = rule.catchUp > 0 ? missed.slice(-rule.catchUp) : [];
  let starting = [...caughtUp, ...onTime];
  if (!rule.overlap && starting.length > 1) starting = starting.slice(-1);
  return { start: starting, skipped: ticks.length - starting.length + unseen, next: cron.nextRun(now) };
}

/** A tick's moment as a run id's part: 20261207T080000Z. */
export function tickWords(tick: Date): string {
  return tick.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}

/** The id of the run a tick of a schedule starts: the same for every worker that fires it. */
export function tickRunId(scheduleName: string, tick: Date): string {
  return `${scheduleName}.${tickWords(tick)}`;
}
