/**
 * The control inbox of a run in PostgreSQL: one row per (run_id, kind) in da_controls, inserted
 * whole in one statement (the primary key makes a second request of a kind 'exists'). The claim
 * query skips a run with a pause row (see WORKABLE in leases.ts); the worker that drives a run
 * looks at the rows at each step boundary and deletes a cancel once the cancelled record is
 * committed, under its lease. Each of its writes says in the same statement whether a row waits
 * (write-notes.ts): a look right after a write that saw none costs no query.
 */
import type { Pool } from 'pg';
import { type ControlInbox, type ControlKind, type ControlRequest, controlProblem } from '../inbox/inboxes.ts';
import { type PgInboxTable, PgKeyedInbox } from './pg-keyed-inbox.ts';
import { WriteNotes } from './write-notes.ts';

const REQUESTS: PgInboxTable = {
  table: 'da_controls',
  keyColumn: 'kind',
  entryColumn: 'request',
  unsettled: '',
  problem: (request, kind) => controlProblem(request, kind as ControlKind),
};

export class PgControlInbox implements ControlInbox {
  private readonly inbox: PgKeyedInbox<ControlRequest>;

  constructor(
    private readonly pool: Pool,
    private readonly runId: string,
    /** What the run's writer's last write saw; a store that writes nothing never notes anything. */
    private readonly notes: WriteNotes = new WriteNotes(),
  ) {
    this.inbox = new PgKeyedInbox(pool, runId, REQUESTS);
  }

  write(request: ControlRequest): Promise<'written' | 'exists'> {
    this.notes.forgetControls();
    return this.inbox.insert(request.kind, request);
  }

  async read(): Promise<ControlRequest[]> {
    if (this.notes.controlsSurelyNone()) return [];
    return this.inbox.entries();
  }
  async settle(kind: ControlKind): Promise<void> {
    this.notes.forgetControls();
    await this.pool.query('DELETE FROM da_controls WHERE run_id = $1 AND kind = $2', [this.runId, kind]);
  }
}
