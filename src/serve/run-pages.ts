/**
 * A page of the API's list from the console's list of runs (RunSources): the rows the caller may
 * see, newest save first, from an opaque cursor on. The console's list filters by state; the
 * rows of other tenants (and, over a folder, the rows that are not runs by id) are passed over
 * here, reading on until the page is full. A tenant asked for is the list's own filter (in the
 * fleet's query), so a page of one tenant's runs does not read through the others'.
 */
import type { ConsoleRow, RunSources } from '../console/run-sources.ts';
import type { PageAsked, RunsPage } from './run-place.ts';

/** The console's list answers at most this many rows at a time. */
const READ_AT_ONCE = 200;

export async function pageOf(sources: RunSources, asked: PageAsked, keep: (row: ConsoleRow) => boolean): Promise<RunsPage> {
  const rows: ConsoleRow[] = [];
  let after = cursorPlace(asked.cursor);
  let more = false;
  for (;;) {
    const read = await sources.list({ category: asked.category, limit: READ_AT_ONCE, after, tenant: asked.tenant });
    for (const row of read.rows) {
      if (!keep(row) || (asked.tenant !== undefined && row.tenant !== asked.tenant)) continue;
      if (rows.length === asked.limit) {
        more = true;
        break;
      }
      rows.push(row);
    }
    const last = read.rows[read.rows.length - 1];
    if (more || !read.more || !last) break;
    after = { updatedAt: last.updatedAt ?? 0, key: last.key };
  }
  const last = rows[rows.length - 1];
  return { runs: rows, next: more && last ? cursorOf(last) : null };
}

function cursorOf(row: ConsoleRow): string {
  return Buffer.from(`${row.updatedAt ?? 0}.${row.key}`).toString('base64url');
}

/** A cursor as a place in the console's order; one that is not one of ours starts from the top. */
function cursorPlace(cursor: string | undefined): { updatedAt: number; key: string } | undefined {
  if (cursor === undefined) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const dot = text.indexOf('.');
  const updatedAt = Number(text.slice(0, dot));
  return dot > 0 && Number.isFinite(updatedAt) ? { updatedAt, key: text.slice(dot + 1) } : undefined;
}
