/**
 * durable-agent/postgres: the PostgreSQL store and the fleet, for programs that drive runs
 * themselves. (A separate entry so that the main one does not load pg.)
 */
export { PgRunStore, DEFAULT_LEASE_MS } from './pg-store.ts';
export { PgControlInbox } from './pg-control-inbox.ts';
export type { PgRunStoreOptions } from './pg-store.ts';
export { openDatabase, openPool, describeDatabase } from './pool.ts';
export { DatabaseUrlMissingError } from './database-url.ts';
export { migrate, SCHEMA_VERSION, SchemaVersionError } from './schema.ts';
export { claimNextRun, claimRun, LeaseLostError, releaseLease, renewLease } from './leases.ts';
export type { Lease } from './leases.ts';
export { submitRuns, listRuns } from '../../fleet/run-queue.ts';
export type { QueuedRun, RunSpec } from '../../fleet/run-queue.ts';
export { Worker } from '../../fleet/worker.ts';
export type { WorkerOptions } from '../../fleet/worker.ts';
export { pruneFleetRuns } from './prune-fleet.ts';
export type { FleetPruneReport, PrunedFleetRun } from './prune-fleet.ts';
export { forkFleetRun } from './fork-fleet.ts';
export type { FleetForkOptions, FleetForkResult } from './fork-fleet.ts';
