/**
 * Loads pg, the optional peer dependency, when durable-agent/postgres is imported. With require
 * (pg is CommonJS) rather than a static import, so that a missing package is reported by name
 * (PgMissingError) instead of as a module-resolution stack trace.
 */
import { createRequire } from 'node:module';
import type pg from 'pg';
import { PgMissingError } from './pg-missing.ts';

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
