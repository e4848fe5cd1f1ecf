/**
 * One statement for the appends of many runs. A worker drives many runs at once, and each of
 * their writes used to be a statement of its own: a round trip, a commit and the socket's system
 * calls for every record, which is most of a worker's CPU. Runs whose writes arrive while the
 * worker's statements are under way wait for the next one and go in it together: one statement,
 * one commit, each run's records fenced by its own lease inside it (append-statement.ts).
 *
 * What a run sees is unchanged: its write is durable when its promise resolves, and a lease lost
 * fails that run's write alone. A statement the server refused is rolled back whole, so its runs
 * are then written one by one, each getting its own answer: one run's bad write never fails
 * another's. A statement whose outcome is unknown (the connection dropped) fails each of its runs'
 * writes as unknown, as a run's own statement would.
 */
import type { Pool } from 'pg';
import { type AppendOutcome, appendQuery, appendRunsQuery, createQuery, type RunAppend, type RunAppendOutcome } from './append-statement.ts';

export interface AppendBatcherOptions {
  /**
   * How many statements may be under way at once. While that many are, appends wait and go
   * together in the next; below it, an append goes out at the next turn of the event loop, with
   * whatever else came in meanwhile. Default 1: measured on a worker of 16 runs, two at once
   * make smaller statements (5 runs' records each, against 7.5) for 15-20% more CPU per record.
   */
  statementsAtOnce?: number | undefined;
}

interface Waiting {
  append: RunAppend;
  resolve: (outcome: AppendOutcome) => void;
  reject: (error: unknown) => void;
}

export class AppendBatcher {
  private waiting: Waiting[] = [];
  private underWay = 0;
  private scheduled = false;
  private readonly statementsAtOnce: number;
  /** Figures for tests and the benchmark: statements sent, and the runs' appends they carried. */
  readonly counts = { statements: 0, appends: 0 };

  constructor(
    private readonly pool: Pool,
    options: AppendBatcherOptions = {},
  ) {
    this.statementsAtOnce = options.statementsAtOnce ?? 1;
  }

  /** Appends one run's records (one call per run at a time: a run's own commit queue sees to it). */
  submit(append: RunAppend): Promise<AppendOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ append, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.underWay >= this.statementsAtOnce || this.waiting.length === 0) return;
    this.scheduled = true;
    // The next turn of the event loop: the runs a finished statement set going write again in
    // the same turn, and go in one statement rather than in one each.
    setImmediate(() => {
      this.scheduled = false;
      if (this.underWay >= this.statementsAtOnce || this.waiting.length === 0) return;
      const batch = this.waiting;
      this.waiting = [];
      this.underWay += 1;
      void this.send(batch).finally(() => {
        this.underWay -= 1;
        this.schedule();
      });
    });
  }

  private async send(batch: Waiting[]): Promise<void> {
    this.counts.statements += 1;
    this.counts.appends += batch.length;
    if (batch.length === 1) return this.sendAlone(batch[0]!);
    let outcomes: RunAppendOutcome[];
    try {
      outcomes = (await this.pool.query<RunAppendOutcome>(appendRunsQuery(batch.map((entry) => entry.append)))).rows;
    } catch (error) {
      if (!rolledBack(error)) {
        for (const entry of batch) entry.reject(error);
        return;
      }
      await Promise.all(batch.map((entry) => this.sendAlone(entry)));
      return;
    }
    const byRun = new Map(outcomes.map((outcome) => [outcome.run_id, outcome]));
    for (const entry of batch) {
      const outcome = byRun.get(entry.append.runId);
      if (outcome) entry.resolve(outcome);
      else entry.reject(new Error(`the statement for ${batch.length} runs gave no answer for run ${entry.append.runId}`));
    }
  }

  private async sendAlone({ append, resolve, reject }: Waiting): Promise<void> {
    try {
      resolve((await this.pool.query<AppendOutcome>(queryFor(append))).rows[0]!);
    } catch (error) {
      reject(error);
    }
  }
}

/** The statement for one run's append (or first record) alone. */
export function queryFor({ runId, epoch, records, bodies, bytes, sync, header, charge }: RunAppend) {
  // A run's first record counts no reply: it never carries a charge.
  return header ? createQuery(runId, epoch, header, records[0]!, bodies[0]!, bytes[0]!) : appendQuery(runId, epoch, records, bodies, bytes, sync, charge);
}

/**
 * Whether the server answered the statement with an error, which rolled it back: a SQLSTATE but
 * one of a lost connection (08), an operator's intervention (57) or an internal error (XX). Any
 * other failure (the connection dropped while the statement ran) leaves its outcome unknown.
 */
export function rolledBack(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|57|XX)/.test(code);
}
