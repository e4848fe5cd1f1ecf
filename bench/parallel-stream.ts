/**
 * Parallel calls and streamed replies, measured side by side in one run (issue 16):
 *
 * - A turn of five read-only calls of 200 ms each against a turn of one such call, on the real
 *   file store (fsync on): the turn's tool phase, from checkpoint A durable to checkpoint B
 *   durable (each outcome's ledger write included). The same five one at a time
 *   (toolConcurrency 1) for reference.
 * - A streamed reply from the fake API on 127.0.0.1 through the real SDK: from the moment the
 *   server writes the first text delta to the moment the run's observer gets it, and to the
 *   moment the live view (ink, on a stand-in terminal) writes a frame that shows it.
 *
 * Part of `npm run bench`; alone: node --import tsx bench/parallel-stream.ts
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { anthropicModel } from '../src/model/anthropic-model.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../src/model/scripted-model.ts';
import { startRun } from '../src/runtime/run-api.ts';
import { DEFAULT_TOOL_CONCURRENCY } from '../src/runtime/tool-scheduler.ts';
import type { RunEvent, RunObserver } from '../src/runtime/run-events.ts';
import { FileStore } from '../src/store/file-store.ts';
import { MemoryStore } from '../src/store/memory-store.ts';
import { defineTool } from '../src/tools/tool.ts';
import { assistantTurns, FakeAnthropic } from '../test/helpers/fake-anthropic.ts';

export const CALL_MS = 200;
const PARALLEL_CALLS = 5;

export interface ParallelStreamFigures {
  /** Median tool phase of a turn, in ms: one call; five side by side (toolConcurrency 5); the default 4; one at a time. */
  oneCallMs: number;
  fiveParallelMs: number;
  fiveAtDefaultMs: number;
  fiveSequentialMs: number;
  /** Median of the per-repetition ratios five-parallel ÷ one-call. */
  parallelOverOne: number;
  /** First streamed text: server write → observer, server write → a frame on the terminal (ms; median and worst). */
  firstTextToObserverMs: { median: number; max: number };
  firstTextToScreenMs: { median: number; max: number };
  reps: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const slowLookup = defineTool<{ q: string }>({
  name: 'slow_lookup',
  description: `a read-only lookup that takes ${CALL_MS} ms`,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  readOnly: true,
  run: async ({ q }) => {
    await new Promise((resolve) => setTimeout(resolve, CALL_MS));
    return `answer to ${q}`;
  },
});

/** The tool phase of one turn of `calls` slow lookups: checkpoint A durable → checkpoint B durable. */
async function toolPhaseMs(dir: string, calls: number, toolConcurrency: number): Promise<number> {
  const reply = toolUseReply(Array.from({ length: calls }, (_, i) => ({ id: `c${i}`, name: 'slow_lookup', input: { q: `q${i}` } })));
  let savedA = 0;
  let savedB = 0;
  const observer = (event: RunEvent) => {
    if (event.type !== 'saved') return;
    if (event.point === 'save-a') savedA = performance.now();
    if (event.point === 'save-b') savedB = performance.now();
  };
  const store = new FileStore(path.join(dir, '.durable-agent'));
  try {
    await startRun({ store, model: scriptedModel([reply, endTurnReply('done')]), tools: [slowLookup], task: 'look up', observer, toolConcurrency });
  } finally {
    store.close();
  }
  return savedB - savedA;
}

class StandInTerminal extends EventEmitter {
  isTTY = true;
  columns = 100;
  rows = 40;
  constructor(private readonly onWrite: (chunk: string) => void) {
    super();
  }
  write = (chunk: string, callback?: () => void) => {
    this.onWrite(chunk);
    callback?.();
    return true;
  };
}

const STREAMED_TEXT = 'Streaming-first-words: the forecast for Lisbon is sunny, 24 degrees, light wind from the north.';

/** One streamed reply: when the server wrote the first text delta, when the observer and the screen had it. */
async function firstTextLatency(server: FakeAnthropic, url: string): Promise<{ toObserver: number; toScreen: number }> {
  let written = 0;
  let observed = 0;
  let onScreen = 0;
  const firstPiece = STREAMED_TEXT.slice(0, 12);
  server.respondWith((request) =>
    assistantTurns(request) === 0
      ? {
          stream: endTurnReply(STREAMED_TEXT),
          chunk: 12,
          // A model's first token comes a while after the request: the view has settled by then.
          gapMs: 40,
          onEvent: (event, at) => {
            if (!written && (event.delta as { type?: string } | undefined)?.type === 'text_delta') written = at;
          },
        }
      : { reply: endTurnReply('unused') },
  );
  process.env.NODE_ENV ??= 'production';
  const { createTuiReporter } = await import('../src/tui/mount-tui.tsx');
  const terminal = new StandInTerminal((chunk) => {
    if (!onScreen && chunk.includes(firstPiece)) onScreen = performance.now();
  });
  const tui = createTuiReporter({ verbose: false, resumeHint: 'durable-agent run --resume', task: null, stdout: terminal as unknown as NodeJS.WriteStream, tickMs: 100, patchConsole: false });
  const observer: RunObserver = (event) => {
    if (!observed && event.type === 'model-stream' && event.delta.type === 'text') observed = performance.now();
    tui.observer(event);
  };
  try {
    const model = anthropicModel({ model: 'claude-bench', apiKey: 'bench-only-key', baseURL: url, maxRetries: 0 });
    await startRun({ store: new MemoryStore(), model, tools: [], task: 'weather in Lisbon?', observer });
  } finally {
    tui.close();
  }
  if (!written || !observed || !onScreen) throw new Error('the streamed text never reached the observer or the screen');
  return { toObserver: observed - written, toScreen: onScreen - written };
}

export async function measureParallelStream(root: string, reps: number, log: (line: string) => void = () => {}): Promise<ParallelStreamFigures> {
  const one: number[] = [];
  const parallel: number[] = [];
  const sequential: number[] = [];
  const atDefault: number[] = [];
  const ratios: number[] = [];
  let n = 0;
  const fresh = () => {
    const dir = path.join(root, `parallel-${++n}`);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  };
  await toolPhaseMs(fresh(), PARALLEL_CALLS, PARALLEL_CALLS); // warm-up
  for (let rep = 0; rep < reps; rep++) {
    // Alternate which goes first: neither always meets a cold or a warm disk.
    const first = rep % 2 === 0;
    const a = first ? await toolPhaseMs(fresh(), 1, PARALLEL_CALLS) : 0;
    const b = await toolPhaseMs(fresh(), PARALLEL_CALLS, PARALLEL_CALLS);
    const c = first ? a : await toolPhaseMs(fresh(), 1, PARALLEL_CALLS);
    one.push(c);
    parallel.push(b);
    ratios.push(b / c);
    sequential.push(await toolPhaseMs(fresh(), PARALLEL_CALLS, 1));
    atDefault.push(await toolPhaseMs(fresh(), PARALLEL_CALLS, DEFAULT_TOOL_CONCURRENCY));
  }
  log(`  parallel calls: ${reps} repetitions done`);

  const server = new FakeAnthropic(() => ({ reply: endTurnReply('unused') }));
  const url = await server.start();
  const toObserver: number[] = [];
  const toScreen: number[] = [];
  try {
    await firstTextLatency(server, url); // warm-up: loads the SDK, React and ink
    for (let rep = 0; rep < reps; rep++) {
      const measured = await firstTextLatency(server, url);
      toObserver.push(measured.toObserver);
      toScreen.push(measured.toScreen);
    }
  } finally {
    await server.stop();
  }
  log(`  streamed text: ${reps} repetitions done`);
  return {
    oneCallMs: median(one),
    fiveParallelMs: median(parallel),
    fiveAtDefaultMs: median(atDefault),
    fiveSequentialMs: median(sequential),
    parallelOverOne: median(ratios),
    firstTextToObserverMs: { median: median(toObserver), max: Math.max(...toObserver) },
    firstTextToScreenMs: { median: median(toScreen), max: Math.max(...toScreen) },
    reps,
  };
}

export function parallelStreamLines(f: ParallelStreamFigures): string[] {
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  return [
    `  tool phase of a turn (checkpoint A durable → checkpoint B durable), ${CALL_MS} ms read-only calls, median of ${f.reps}:`,
    `    one call ${ms(f.oneCallMs)} · five side by side (--tool-concurrency 5) ${ms(f.fiveParallelMs)} · ` +
      `five at the default 4 ${ms(f.fiveAtDefaultMs)} · five one at a time ${ms(f.fiveSequentialMs)}`,
    `  first streamed text, from the fake server's write of the first text delta (median / worst of ${f.reps}):`,
    `    to the run's observer ${ms(f.firstTextToObserverMs.median)} / ${ms(f.firstTextToObserverMs.max)} · to a frame of the live view on the terminal ${ms(f.firstTextToScreenMs.median)} / ${ms(f.firstTextToScreenMs.max)}`,
    `  target: five parallel read-only calls (--tool-concurrency 5) within 1.3× of one: ${f.parallelOverOne.toFixed(2)}× (${f.parallelOverOne <= 1.3 ? 'met' : 'NOT met'})`,
    `  target: first streamed text on screen within 50 ms of the server's write: worst ${ms(f.firstTextToScreenMs.max)} (${f.firstTextToScreenMs.max <= 50 ? 'met' : 'NOT met'})`,
  ];
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-ps-'));
  try {
    const figures = await measureParallelStream(root, 7, (line) => process.stderr.write(`${line}\n`));
    console.log(['Parallel calls and streamed replies:', ...parallelStreamLines(figures)].join('\n'));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
