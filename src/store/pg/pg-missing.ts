/**
 * pg is an optional peer dependency: only durable-agent/postgres and the fleet commands need it.
 * This module holds no pg types, so that the main entry can export the error without making a
 * TypeScript consumer install @types/pg.
 */
import { OptionalDependencyMissingError } from '../../util/durable-agent-error.ts';
export class PgMissingError extends OptionalDependencyMissingError {
  override readonly name = 'PgMissingError';
  constructor(cause: unknown) {
    super(
      'pg',
      'durable-agent/postgres and the fleet commands need the PostgreSQL client "pg", an optional peer dependency ' +
        'that is not installed: install it next to durable-agent (npm install pg) and run again.',
      { cause },
    );
  }
}
