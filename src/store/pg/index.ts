/**
 * The PostgreSQL store: what src/postgres.ts (the durable-agent/postgres entry) hands on, with
 * the fleet beside it.
 */
export { PgRunStore, DEFAULT_LEASE_MS } from './pg-store.ts';
export { openDatabaseStore } from './open-database-store.ts';
export { PgControlInbox } from './pg-control-inbox.ts';
export type { PgRunStoreOptions } from './pg-store.ts';
export { openDatabase, openPool, describeDatabase } from './pool.ts';
export type { Database } from './pool.ts';
export { DatabaseUrlMissingError } from './database-url.ts';
export { migrate, SCHEMA_VERSION } from './schema.ts';
export { claimNextRun, claimRun, releaseLease, renewLease } from './leases.ts';
export { LeaseLostError, SchemaVersionError } from './pg-errors.ts';
export type { Lease } from './leases.ts';
// Sealed runs of a fleet: their run keys rewrapped under a new master key, or one run's deleted (crypto-shredding).
export { rotatePgRunKeys, rotatePgScheduleKeys, shredPgRun } from './pg-run-keys.ts';
export type { PgRotationReport, PgScheduleRotationReport } from './pg-run-keys.ts';
// Plain runs of a fleet sealed in (keys rotate --seal-plain), each in one transaction.
export { sealPlainPgRuns } from './pg-seal-plain.ts';
export type { PgSealInReport } from './pg-seal-plain.ts';
