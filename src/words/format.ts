/** Small pure formatters for the command line's tables. */
import type { TokenUsage } from '../../machines/agent-loop.types.ts';

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function formatAgo(then: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

/** How long something took or has waited: "0.4 s", "12 s", "3 min 05 s", "2 h 03 min", "3 d 04 h". */
export function formatElapsed(ms: number): string {
  const clamped = Math.max(0, ms);
  if (clamped < 10_000) return `${(Math.floor(clamped / 100) / 10).toFixed(1)} s`;
  const seconds = Math.floor(clamped / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, '0')} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${String(minutes % 60).padStart(2, '0')} min`;
  return `${Math.floor(hours / 24)} d ${String(hours % 24).padStart(2, '0')} h`;
}

export function formatUsage(usage: TokenUsage): string {
  const tokens = `input ${usage.input} · output ${usage.output} · cache read ${usage.cacheRead} · cache write ${usage.cacheWrite}`;
  // Server tool requests only where a run made some.
  const searches = usage.webSearchRequests ? ` · web searches ${usage.webSearchRequests}` : '';
  const fetches = usage.webFetchRequests ? ` · web fetches ${usage.webFetchRequests}` : '';
  return `${tokens}${searches}${fetches}`;
}

/** Two columns: a label and its value. */
export function keyValueLines(rows: ReadonlyArray<readonly [string, string]>): string[] {
  const width = Math.max(...rows.map(([key]) => key.length));
  return rows.map(([key, value]) => `${key.padEnd(width)}  ${value}`);
}

/** A table with a header row; columns are padded to their widest cell. */
export function tableLines(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}
