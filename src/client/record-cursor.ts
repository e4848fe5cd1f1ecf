/**
 * Where a follower stands in a run's records, across connections: the resume point it asks the
 * server for, and which recorded events it has yielded, so that none is yielded twice.
 */
import type { RunEvent } from './api-types.ts';

export class RecordCursor {
  /** The last record all of whose events arrived: the resume point. */
  complete: number | null;
  /** The record whose events are arriving, and the events of it yielded so far (as JSON). */
  #current: number | null = null;
  #yieldedOfCurrent = new Set<string>();

  constructor(after: number | undefined) {
    this.complete = after ?? null;
  }

  /**
   * Whether an event of record `seq` is new, counting it if so. A record's events are told apart
   * by their content: a server that resends some of them, in any order, gets none yielded twice.
   */
  take(seq: number, event: RunEvent): boolean {
    if (this.complete !== null && seq <= this.complete) return false;
    const key = JSON.stringify(event);
    if (this.#current === null || seq > this.#current) {
      // A later record's event: the record before it is whole.
      if (this.#current !== null) this.complete = this.#current;
      this.#current = seq;
      this.#yieldedOfCurrent = new Set([key]);
      return true;
    }
    if (seq < this.#current || this.#yieldedOfCurrent.has(key)) return false;
    this.#yieldedOfCurrent.add(key);
    return true;
  }
}
