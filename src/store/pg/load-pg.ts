/**
 * pg is an optional peer dependency: only durable-agent/postgres and the fleet commands need it,
 * so a program that uses the file store does not install it. Loaded with require (pg is
 * CommonJS) so that a missing package can be named in a message of ours, when
 * durable-agent/postgres is imported, instead of surfacing as a module-resolution stack trace.
 */
import { createRequire } from 'node:module';
import type pg from 'pg';

export class PgMissingError extends Error {
  override readonly name = 'PgMissingError';
  readonly packageName = 'pg';
  constructor(cause: unknown) {
    super(
      'durable-agent/postgres needs the PostgreSQL client "pg", an optional peer dependency that is not installed: ' +
        'install it next to durable-agent (npm install pg) and run again.',
      { cause },
    );
  }
}

export function loadPg(): typeof pg {
  try {
    return createRequire(import.meta.url)('pg') as typeof pg;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && /^Cannot find module 'pg'/.test((error as Error).message)) {
      throw new PgMissingError(error);
    }
    throw error;
  }
}
