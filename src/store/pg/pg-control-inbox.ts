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
import { noKeys, type PgInboxTable, PgKeyedInbox } from './pg-keyed-inbox.ts';
import { WriteNotes } from './write-notes.ts';
import type { ValueOpener, ValueSealer } from '../../seal/value-codec.ts';

const REQUESTS: PgInboxTable = {
  table: 'da_controls',
  keyColumn: 'kind',
  entryColumn: 'request',
  unsettled: '',
  problem: (request, kind) => controlProblem(request, kind as ControlKind),
};

/** Where a control request's reason is bound, beside its run: its kind. */
function reasonPlace(kind: string): string {
  return `inbox-control/${kind}.reason`;
}

/** A request as a sealed run keeps it: its reason sealed, with the mark; who asked and when stay readable. One without a reason is kept as it is. */
export function sealedControlRequest<R extends { kind: string; reason: string | null }>(request: R, sealer: ValueSealer): R {
  if (request.reason === null) return request;
  return { ...request, reason: sealer.seal(request.reason, reasonPlace(request.kind)), sealed: sealer.keyId };
}

export class PgControlInbox implements ControlInbox {
  private readonly inbox: PgKeyedInbox<ControlRequest>;

  constructor(
    private readonly pool: Pool,
    private readonly runId: string,
    /** What the run's writer's last write saw; a store that writes nothing never notes anything. */
    private readonly notes: WriteNotes = new WriteNotes(),
    /** The run's sealer and opener for what it keeps outside its records, when it is sealed and loaded (run-sealing.ts: valuesFor), or its key kept before its first record (valuesBeforeCreate). */
    values: () => Promise<{ sealer: ValueSealer; opener: ValueOpener } | null> = async () => null,
    /** The run's key as its row keeps it (the wrap), opened: for a run sealed in after this store took it for plain (run-sealing.ts: valuesWithWrap). */
    sealedMeanwhile: (runKey: unknown) => Promise<{ sealer: ValueSealer; opener: ValueOpener }> = noKeys(runId),
  ) {
    // A sealed run's requests wait with their reason sealed (a person's words); who asked and when stay readable (status shows them).
    this.inbox = new PgKeyedInbox<ControlRequest>(pool, runId, REQUESTS, {
      keep: async (request) => {
        const codec = request.reason === null ? null : await values();
        return codec ? { kept: sealedControlRequest(request, codec.sealer), plain: false } : { kept: request, plain: request.reason !== null };
      },
      keepSealed: async (request, runKey) => sealedControlRequest(request, (await sealedMeanwhile(runKey)).sealer),
      read: async (kept) => {
        if (kept === null || typeof kept !== 'object' || !Object.hasOwn(kept, 'sealed')) return kept;
        const { sealed: _mark, ...request } = kept as ControlRequest & { sealed: unknown };
        let codec: Awaited<ReturnType<typeof values>>;
        try {
          codec = await values();
        } catch {
          // Unreadable without the run's key: left out, as a row that is not a whole request is.
          return null;
        }
        return codec ? { ...request, reason: codec.opener.open(request.reason, reasonPlace(request.kind)) } : null;
      },
    });
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
