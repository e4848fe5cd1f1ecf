/**
 * durable-agent/testing: what a program's own tests drive a run with — a scripted model and its
 * replies, a store in memory, and crash points that stop a run where a kill would.
 *
 * @module durable-agent/testing
 */
export { endTurnReply, scriptedModel, ScriptExhaustedError, stopReply, toolUseReply } from './model/scripted-model.ts';
export type { ScriptedStep } from './model/scripted-model.ts';
export { MemoryStore } from './store/memory-store.ts';
export { CrashPoints, CrashSpecError, SIMULATED_CRASH_EXIT_CODE, SimulatedCrash } from './runtime/crash-points.ts';
export type { CrashAction, CrashHandler } from './runtime/crash-points.ts';

// Crash drills of your own agent: every crash point of its path played, killed there, resumed, its side effects counted.
export { drillAgent, drillPoint, DrillPathError, outcomeWords, pathOf } from './drill/drill.ts';
export type { CallOutcome, DrillCallResult, DrillOptions, DrillReport, DrillScratch, DrillToolSummary } from './drill/drill.ts';
export { crashTests, SideEffectTwiceError } from './drill/crash-tests.ts';
export type { RegisterTest } from './drill/crash-tests.ts';
export { DrillScriptError, recordedReplies, scriptReplies } from './drill/drill-script.ts';
export { drillLines, drillMarkdown } from './drill/drill-report.ts';
export { replayLines, replayRun } from './drill/replay.ts';
export type { Divergence, ReplayOptions, ReplayReport } from './drill/replay.ts';
