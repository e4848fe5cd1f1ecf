/**
 * The rows of the list kept in their order (newest save first) and counted by state as they come
 * and go, so an answer takes its page from the front instead of sorting every run it knows.
 * A changed row is taken out and put back where it now belongs: a binary search and a splice.
 */
import { type ConsoleRow, newestFirst, RUN_CATEGORIES, type RunCategory } from './console-row.ts';

export class SortedRows {
  private readonly rows: ConsoleRow[] = [];
  private readonly counted = new Map<RunCategory, number>(RUN_CATEGORIES.map((name) => [name, 0]));
  /** The same counts for each tenant's rows alone: a caller of one tenant, or a filter by tenant, is answered without a look at every row. */
  private readonly byTenant = new Map<string, Map<RunCategory, number>>();

  get size(): number {
    return this.rows.length;
  }

  /** Every row in order; the array is the index's own: read it, never change it. */
  get ordered(): readonly ConsoleRow[] {
    return this.rows;
  }

  /** The rows of a category: every tenant's, or one tenant's. */
  count(category: RunCategory, tenant?: string): number {
    return tenant === undefined ? this.counted.get(category)! : (this.byTenant.get(tenant)?.get(category) ?? 0);
  }

  /** The tenants some row is of. */
  get tenants(): string[] {
    return [...this.byTenant.keys()];
  }

  add(row: ConsoleRow): void {
    this.rows.splice(this.placeOf(row), 0, row);
    this.counted.set(row.category, this.count(row.category) + 1);
    this.countTenant(row, 1);
  }

  /** Takes out this very row (as it was added). */
  remove(row: ConsoleRow): void {
    let at = this.placeOf(row);
    // Rows equal in order to it (none, as keys differ) would sit next to it: look both ways.
    while (at < this.rows.length && this.rows[at] !== row && newestFirst(this.rows[at]!, row) === 0) at++;
    if (this.rows[at] !== row) at = this.rows.indexOf(row);
    if (at === -1) return;
    this.rows.splice(at, 1);
    this.counted.set(row.category, this.count(row.category) - 1);
    this.countTenant(row, -1);
  }

  private countTenant(row: ConsoleRow, change: 1 | -1): void {
    let counts = this.byTenant.get(row.tenant);
    if (!counts) this.byTenant.set(row.tenant, (counts = new Map()));
    const now = (counts.get(row.category) ?? 0) + change;
    if (now === 0) counts.delete(row.category);
    else counts.set(row.category, now);
    if (counts.size === 0) this.byTenant.delete(row.tenant);
  }

  /** The first place whose row comes after this place in the order (a save's time and a key): where a page after it starts. */
  placeAfter(after: { updatedAt: number; key: string }): number {
    let low = 0;
    let high = this.rows.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const row = this.rows[middle]!;
      const updatedAt = row.updatedAt ?? 0;
      if (updatedAt > after.updatedAt || (updatedAt === after.updatedAt && row.key <= after.key)) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Where the row goes: the first place whose row comes after it. */
  private placeOf(row: ConsoleRow): number {
    let low = 0;
    let high = this.rows.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (newestFirst(this.rows[middle]!, row) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
