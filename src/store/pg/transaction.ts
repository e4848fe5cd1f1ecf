/** One transaction on a connection of its own, the way every multi-statement write here needs it. */
import type { Pool, PoolClient } from 'pg';

/** Committed when `body` returns, rolled back when it throws (its error is what the caller sees). */
export async function inTransaction<T>(pool: Pool, body: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await body(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
