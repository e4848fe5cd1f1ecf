/**
 * The demo's real event stream: the real runtime, scripted model and demo tools on a memory
 * store, so the view is tested on what the runtime actually emits, not on hand-made events.
 */
import type { Budget } from '../../machines/agent-loop.types.ts';
import { demoScript, DEMO_TASK, ensureSampleNotes } from '../../src/demo/demo-task.ts';
import { demoTools } from '../../src/demo/demo-tools.ts';
import { scriptedModel } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { initialView, reduceView, type RunView, type ViewSettings } from '../../src/tui/run-view.ts';
import { tempDir } from '../helpers/temp-dir.ts';

export interface DemoRun {
  dir: string;
  store: MemoryStore;
  /** Events of the first process, up to its end or its crash. */
  events: RunEvent[];
}

export async function runDemo(options: { crashAfter?: string; model?: string; requireApproval?: string[]; budget?: Budget } = {}): Promise<DemoRun> {
  const dir = tempDir('da-tui-');
  ensureSampleNotes(dir);
  const store = new MemoryStore();
  const events: RunEvent[] = [];
  try {
    await startRun({
      store,
      model: scriptedModel(demoScript(), { name: options.model ?? 'scripted-demo' }),
      tools: demoTools(dir),
      task: DEMO_TASK,
      observer: (event) => events.push(event),
      ...(options.crashAfter ? { crashAfter: options.crashAfter } : {}),
      ...(options.requireApproval ? { requireApproval: options.requireApproval, wait: false } : {}),
      ...(options.budget ? { budget: options.budget } : {}),
    });
  } catch (error) {
    if (!(error instanceof SimulatedCrash)) throw error;
  }
  return { dir, store, events };
}

/** A second process picking the run up: its events only. */
export async function resumeDemo(run: DemoRun, options: { verify?: boolean } = {}): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  await resumeRun({
    store: run.store,
    model: scriptedModel(demoScript(), { name: 'scripted-demo' }),
    tools: demoTools(run.dir, { verify: options.verify ?? true }),
    observer: (event) => events.push(event),
  });
  return events;
}

export { DEMO_PLAIN_LINES } from '../helpers/demo-lines.ts';

export const SETTINGS = { verbose: false, resumeHint: 'durable-agent demo --resume', task: DEMO_TASK };

/** The view after the events up to and including the first that matches `until` (all of them without it). */
export function viewOf(events: readonly RunEvent[], until?: (event: RunEvent) => boolean, settings: ViewSettings = SETTINGS): RunView {
  let view = initialView(settings);
  for (const event of events) {
    view = reduceView(view, { type: 'event', event, at: atOf(event) });
    if (until?.(event)) return view;
  }
  if (until) throw new Error('no event matched');
  return view;
}

/** The time an event carries, or a fixed one (only the model call's start is timed by the view). */
function atOf(event: RunEvent): number {
  return event.type === 'saved' ? event.at : event.type === 'tool-started' ? event.at : 1_000;
}
