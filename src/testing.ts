/**
 * durable-agent/testing: what a program's own tests drive a run with — a scripted model and its
 * replies, a store in memory, and crash points that stop a run where a kill would.
 */
export { endTurnReply, scriptedModel, ScriptExhaustedError, stopReply, toolUseReply } from './model/scripted-model.ts';
export type { ScriptedStep } from './model/scripted-model.ts';
export { MemoryStore } from './store/memory-store.ts';
export { CrashPoints, CrashSpecError, SIMULATED_CRASH_EXIT_CODE, SimulatedCrash } from './runtime/crash-points.ts';
export type { CrashAction, CrashHandler } from './runtime/crash-points.ts';
