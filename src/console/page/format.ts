/** How the console's page writes times and money. */

/** An instant to the second, in UTC: `2026-01-02 03:04:05Z`; `-` for none. */
export function when(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '-' : new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** The time of day to the millisecond, in UTC. */
export function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}

/** US dollars to four places; `-` without a price. */
export function usd(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : `$${value.toFixed(4)}`;
}
