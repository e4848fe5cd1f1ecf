/**
 * Durations a person types (`500ms`, `90s`, `15m`, `2h`, `3d`): one whole number and one unit, so
 * that what is stored is exactly what was meant. Anything else is refused with the forms that work.
 */

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;

/** Milliseconds for `text`, or null when it is not a duration of this form. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,15})(ms|s|m|h|d)$/.exec(text);
  if (!match) return null;
  const ms = Number(match[1]) * UNIT_MS[match[2] as Unit];
  return Number.isSafeInteger(ms) ? ms : null;
}

/** The shortest exact form: 90000 → 90s, 900000 → 15m, 7200000 → 2h; whole seconds at least. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm'] as const) {
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`;
}
