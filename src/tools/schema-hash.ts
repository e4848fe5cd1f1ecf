/**
 * A tool's input schema by its content: the same schema written with its keys in another order
 * has the same hash, so a run pins its tools' contracts without pinning how they were spelled.
 */
import { createHash } from 'node:crypto';

/** The first 16 hex digits of the SHA-256 of the schema's JSON with its keys sorted. */
export function schemaHash(schema: unknown): string {
  return createHash('sha256').update(canonicalJson(schema)).digest('hex').slice(0, 16);
}

/** JSON with its keys sorted, undefined members left out: one text for one content. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
