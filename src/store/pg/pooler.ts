/**
 * A database reached through a connection pooler in transaction pooling mode (PgBouncer's
 * `pool_mode = transaction`, and the poolers of hosted PostgreSQL): each transaction may run on
 * another server connection, so nothing may rest on a session. The URL says so with
 * `pgbouncer=true` (the parameter other PostgreSQL clients read for the same purpose); it is
 * taken off before connecting. Then statements are sent unnamed (a statement prepared on one
 * server connection does not exist on the next), and nobody LISTENs (a notification reaches the
 * server connection that listened, which by then serves someone else): workers and waits look
 * again at intervals instead (channel-signal.ts, rest-listener.ts).
 */
import type pg from 'pg';
import { DurableAgentError, type ErrorKind } from '../../util/durable-agent-error.ts';

const POOLER_PARAMETER = 'pgbouncer';

export interface PoolerUrl {
  /** The URL to connect to, without the parameter. */
  url: string;
  /** Whether the URL says it reaches the database through a pooler in transaction mode. */
  throughPooler: boolean;
}

export class PoolerParameterError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'PoolerParameterError';
  constructor(readonly value: string) {
    super(`${POOLER_PARAMETER}=${value} in the database URL: say ${POOLER_PARAMETER}=true when the URL reaches PostgreSQL through a pooler in transaction mode (PgBouncer), or leave it out.`);
  }
}

export function poolerUrlOf(url: string): PoolerUrl {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, throughPooler: false };
  }
  const value = parsed.searchParams.get(POOLER_PARAMETER);
  if (value === null) return { url, throughPooler: false };
  if (value !== 'true' && value !== 'false') throw new PoolerParameterError(value);
  parsed.searchParams.delete(POOLER_PARAMETER);
  return { url: parsed.toString(), throughPooler: value === 'true' };
}

/** The pools opened on a URL that reaches the database through a pooler. */
const pooled = new WeakSet<object>();

export function markThroughPooler(pool: pg.Pool): void {
  pooled.add(pool);
}

/** Whether the pool reaches the database through a pooler in transaction mode (see the top of this file). */
export function isThroughPooler(pool: object): boolean {
  return pooled.has(pool);
}

/** pg's Client, sending every statement unnamed: prepared in the transaction that runs it, on whichever server connection that is. */
export function unnamedStatementClient(Client: typeof pg.Client): typeof pg.Client {
  return class UnnamedStatementClient extends Client {
    // biome-ignore lint/suspicious/noExplicitAny: pg's query() has a dozen overloads; this passes each through as it came.
    override query(config: any, ...rest: any[]): any {
      if (config && typeof config === 'object' && typeof config.name === 'string') {
        const { name: _name, ...unnamed } = config;
        return (super.query as (...args: unknown[]) => unknown)(unnamed, ...rest);
      }
      return (super.query as (...args: unknown[]) => unknown)(config, ...rest);
    }
  } as typeof pg.Client;
}
