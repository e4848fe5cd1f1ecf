/**
 * durable-agent/postgres: the PostgreSQL store and the fleet, for programs that drive runs
 * themselves. (A separate entry so that the main one does not load pg.)
 *
 * @module durable-agent/postgres
 */
export * from './store/pg/index.ts';
export { submitRuns } from './fleet/run-queue.ts';
export { listRuns } from './fleet/list-runs.ts';
export type { FleetRunSummary } from './fleet/fleet-summary.ts';
export type { RunSummary } from './runtime/run-summary.ts';
export type { AgentRunSpec, DemoRunSpec, QueuedRun, RunSpec } from './fleet/run-queue.ts';
export { submitRun } from './fleet/submit-run.ts';
export { listTenants, setTenant } from './fleet/tenants.ts';
export type { Tenant, TenantSettings } from './fleet/tenants.ts';
export { fireDueSchedules, listSchedules, pauseSchedule, removeSchedule, resumeSchedule, scheduleRun } from './fleet/schedules.ts';
export type { FiredSchedules, Schedule, ScheduleOptions, ScheduleOverlap, ScheduledRun } from './fleet/schedules.ts';
export type { SubmitRunOptions, SubmittedRun } from './fleet/submit-run.ts';
export { awaitRun, readFleetRun } from './fleet/await-run.ts';
export type { AwaitRunOptions, FleetRunResult, FleetRunState } from './fleet/await-run.ts';
export { Worker } from './fleet/worker.ts';
export type { WorkerOptions } from './fleet/worker.ts';
export { verifyWebhookSignature, signWebhookRequest, WEBHOOK_EVENT_ID_HEADER, WEBHOOK_EVENT_TYPE_HEADER, WEBHOOK_SIGNATURE_HEADER } from './fleet/webhooks.ts';
export type { VerifiedWebhook, VerifyWebhookOptions, WebhookEventBody, WebhookEventType, WebhookHeaders, WebhookRequestParts, WebhookSettings } from './fleet/webhooks.ts';
export { pruneFleetInBatches, pruneFleetRuns } from './fleet/prune-fleet.ts';
export type { FleetPruneReport, PrunedFleetRun } from './fleet/prune-fleet.ts';
export { forkFleetRun } from './fleet/fork-fleet.ts';
export type { FleetForkOptions, FleetForkResult } from './fleet/fork-fleet.ts';
export { raiseFleetRun } from './fleet/raise-run.ts';
export type { FleetRaiseOptions, FleetRaiseResult, LimitName, RaiseProblem, RaiseRequest } from './fleet/raise-run.ts';
