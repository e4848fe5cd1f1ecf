/**
 * node --import tsx bench/console-live.ts: what a live console page costs the run it watches.
 * A 300-turn run (scripted model, one read-only tool a turn, a real file store with its fsyncs)
 * alone, and with the console streaming its records to a reader (as a page's live stream does),
 * taking turns 5 times each; the median per-turn time of each, and the difference.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startConsole } from '../src/console/console-server.ts';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../src/model/scripted-model.ts';
import { startRun } from '../src/runtime/run-api.ts';
import { FileStore } from '../src/store/file-store.ts';
import { defineTool } from '../src/tools/tool.ts';

const TURNS = 300;
const TRIALS = 5;
const TOKEN = 'bench:console-live-0123456789';
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-live-'));
const page = defineTool<{ n: number }>({ name: 'read_page', description: 'reads a page', inputSchema: { type: 'object', properties: { n: { type: 'number' } } }, readOnly: true, run: ({ n }) => `page ${n}` });

function steps(): ScriptedStep[] {
  const all: ScriptedStep[] = Array.from({ length: TURNS }, (_, i) => toolUseReply([{ id: `toolu_${i + 1}`, name: 'read_page', input: { n: i + 1 } }]));
  all.push(endTurnReply('done'));
  return all;
}

/** One run's per-turn milliseconds; `watched`: with the console's live stream of it read all along. */
async function trial(name: string, watched: boolean): Promise<{ perTurnMs: number; records: number }> {
  const dir = path.join(root, name);
  fs.mkdirSync(dir);
  const stateDir = path.join(dir, '.durable-agent');
  const consoleServer = watched ? await startConsole({ roots: [stateDir], port: 0, token: TOKEN, user: 'bench' }) : null;
  let records = 0;
  const controller = new AbortController();
  let reading: Promise<void> = Promise.resolve();
  const started = performance.now();
  const run = startRun({ store: new FileStore(stateDir), model: scriptedModel(steps()), tools: [page], task: 'Read the pages.', maxTurns: TURNS + 1 });
  if (consoleServer) {
    while (!fs.existsSync(path.join(stateDir, 'journal.jsonl'))) await new Promise((resolve) => setTimeout(resolve, 1));
    reading = (async () => {
      const response = await fetch(`${consoleServer.origin}/api/runs/${encodeURIComponent('0~~')}/events`, { headers: { authorization: `Bearer ${TOKEN}`, 'last-event-id': '-1' }, signal: controller.signal });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          records += (decoder.decode(value).match(/^event: record$/gm) ?? []).length;
        }
      } catch {
        // aborted at the end
      }
    })();
  }
  const result = await run;
  const elapsed = performance.now() - started;
  if (result.status !== 'done') throw new Error(`the run ended ${result.status}`);
  if (consoleServer) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    await reading;
    await consoleServer.close();
  }
  return { perTurnMs: elapsed / TURNS, records };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

try {
  const alone: number[] = [];
  const watched: number[] = [];
  let streamed = 0;
  for (let i = 0; i < TRIALS; i++) {
    alone.push((await trial(`alone-${i}`, false)).perTurnMs);
    const seen = await trial(`watched-${i}`, true);
    watched.push(seen.perTurnMs);
    streamed = seen.records;
  }
  const [a, w] = [median(alone), median(watched)];
  console.log(`node ${process.version}, ${os.cpus().length} cores; load average ${os.loadavg()[0]!.toFixed(1)}`);
  console.log(`A ${TURNS}-turn run, median of ${TRIALS} each, taking turns:`);
  console.log(`  alone:                      ${a.toFixed(2)} ms a turn`);
  console.log(`  with a live console stream: ${w.toFixed(2)} ms a turn (${streamed} records streamed)`);
  console.log(`  difference: ${(((w - a) / a) * 100).toFixed(1)}%`);
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
