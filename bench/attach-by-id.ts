/**
 * Opening a folder of many runs and attaching to one of them by id, against a folder of few:
 * the start a program makes each time it runs ("do this task once") must not slow down as the
 * folder fills. Each folder holds N finished runs, every one a real run (an invoice sent, then
 * the final answer) written by the real runtime and FileStore with fsync and fdatasync made
 * no-ops (withoutSyncs), only to write the input fast; the attaches timed run with real syncs.
 * One attach = startRun under the id of a run in the folder: it takes the run's lock, reads the
 * run's journal, answers with the stored result and runs nothing (checked on every attach).
 */
import fs from 'node:fs';
import path from 'node:path';
import { startRun } from '../src/runtime/run-api.ts';
import { FileRuns } from '../src/store/file-runs.ts';
import { listRuns } from '../src/fleet/list-runs.ts';
import { defineTool } from '../src/tools/tool.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../src/testing.ts';
import { withoutSyncs } from './io-counter.ts';
import { median } from './stats.ts';
import type { TargetCheck } from './targets.ts';

export interface AttachFigures {
  runs: number;
  /** Seconds to write the folder's runs (syncs off: the input only). */
  writeSeconds: number;
  /** startRun under an existing id, answered from the store: median and 90th percentile, ms. */
  attachMs: number;
  attachP90Ms: number;
  /** One listRuns of the whole folder (reads every run's journal), ms: a diagnostic, not judged. */
  listMs: number;
}

const TASK = 'Invoice the customer.';

function invoiceParts(sent: { count: number }) {
  const sendInvoice = defineTool<{ customer: string }>({
    name: 'send_invoice',
    description: 'Send an invoice.',
    inputSchema: { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'] },
    readOnly: false,
    run: ({ customer }) => {
      sent.count++;
      return `sent to ${customer}`;
    },
  });
  const model = scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'send_invoice', input: { customer: 'ACME' } }]), endTurnReply('Invoice sent.')]);
  return { model, tools: [sendInvoice], task: TASK };
}

const idOf = (index: number) => `order-${String(index).padStart(6, '0')}`;

async function writeFolder(root: string, runs: number): Promise<number> {
  const started = performance.now();
  const folder = new FileRuns(root);
  await withoutSyncs(async () => {
    for (let index = 0; index < runs; index++) {
      const store = folder.store(idOf(index));
      await startRun({ store, ...invoiceParts({ count: 0 }) });
      store.close();
    }
  });
  return (performance.now() - started) / 1000;
}

async function attachOnce(root: string, runId: string): Promise<number> {
  const sent = { count: 0 };
  const store = new FileRuns(root).store(runId);
  const started = performance.now();
  const result = await startRun({ store, ...invoiceParts(sent) });
  const ms = performance.now() - started;
  store.close();
  if (result.status !== 'done' || result.runId !== runId || sent.count !== 0) {
    throw new Error(`attaching to ${runId} did not answer from the store (status ${result.status}, ${sent.count} invoices sent)`);
  }
  return ms;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

export async function measureAttachById(root: string, counts: readonly number[], reps: number, log: (line: string) => void): Promise<AttachFigures[]> {
  const folders = new Map<number, { dir: string; writeSeconds: number }>();
  for (const runs of counts) {
    const dir = path.join(root, `attach-${runs}`);
    log(`  attach by id: writing ${runs.toLocaleString('en-US')} finished runs (syncs off for this input only)`);
    folders.set(runs, { dir, writeSeconds: await writeFolder(dir, runs) });
  }
  const samples = new Map<number, number[]>(counts.map((runs) => [runs, []]));
  // Warm-up: one attach in each folder, untimed, so that neither is timed compiling the path.
  for (const runs of counts) await attachOnce(folders.get(runs)!.dir, idOf(0));
  for (let rep = 0; rep < reps; rep++) {
    // The folders take turns going first; each rep attaches to another run of the folder.
    const order = rep % 2 ? [...counts].reverse() : counts;
    for (const runs of order) samples.get(runs)!.push(await attachOnce(folders.get(runs)!.dir, idOf((rep * 7919) % runs)));
  }
  const figures: AttachFigures[] = [];
  for (const runs of counts) {
    const { dir, writeSeconds } = folders.get(runs)!;
    const listStarted = performance.now();
    const listed = await listRuns(new FileRuns(dir));
    const listMs = performance.now() - listStarted;
    if (listed.length !== runs || listed.some((run) => run.state !== 'done')) throw new Error(`listing ${dir} found ${listed.length} runs, not ${runs} done`);
    const ms = samples.get(runs)!;
    figures.push({ runs, writeSeconds, attachMs: median(ms), attachP90Ms: percentile(ms, 0.9), listMs });
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}

export function attachLines(figures: readonly AttachFigures[]): string[] {
  return figures.map(
    (row) =>
      `  ${row.runs.toLocaleString('en-US').padStart(6)} runs in the folder: attach ${row.attachMs.toFixed(2)} ms (p90 ${row.attachP90Ms.toFixed(2)} ms); ` +
      `list all ${row.listMs.toFixed(0)} ms; written in ${row.writeSeconds.toFixed(1)} s`,
  );
}

export function attachTargets(figures: readonly AttachFigures[]): TargetCheck[] {
  const few = figures[0]!;
  const many = figures[figures.length - 1]!;
  const ratio = many.attachMs / few.attachMs;
  return [
    {
      target: `opening a folder of ${many.runs.toLocaleString('en-US')} finished runs and attaching to one within 2× of a folder of ${few.runs}`,
      measured: `${many.attachMs.toFixed(2)} ms / ${few.attachMs.toFixed(2)} ms = ${ratio.toFixed(2)}×`,
      met: ratio <= 2,
    },
  ];
}
