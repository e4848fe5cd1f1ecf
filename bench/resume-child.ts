/**
 * One resume measurement, in a process of its own so that its peak RSS is the resume's.
 *
 *   resume-child.ts resume <store dir>       load + fold + reconcile: resumeRun up to its first effect
 *   resume-child.ts read-parse <journal>     read the same file and JSON.parse every record
 *
 * Prints one JSON line: the time of the measured part, and the process's peak RSS before it
 * (after every import) and after it.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { resumeRun } from '../src/runtime/run-api.ts';
import type { RunEvent } from '../src/core/run-events.ts';
import { FileStore } from '../src/store/file-store.ts';
import { ToolRegistry } from '../src/tools/tool-registry.ts';
import type { JournalRecord } from '../src/store/journal/journal-record.ts';
import type { AppendReceipt } from '../src/store/store.ts';
import { fetchPage } from './workload.ts';

export interface ChildMeasure {
  ms: number;
  /** CPU time of the process (user + system, all threads) over the measured part: less at the mercy of a busy machine. */
  cpuMs: number;
  /** process.resourceUsage().maxRSS, in KB, once everything is imported and before the measured part. */
  baseRssKb: number;
  /** The same after the measured part: the peak of the whole process. */
  peakRssKb: number;
  /** What the resume did before its first effect, to check it is the work we mean to time. */
  detail: string;
}

/** Thrown at the first effect a resumed run would make; the measurement ends there. */
class FirstEffect extends Error {
  constructor(readonly what: string) {
    super(`first effect: ${what}`);
  }
}

/** The run's real store, stopped before it writes anything. */
class StopAtFirstWrite extends FileStore {
  override async append(record: JournalRecord): Promise<AppendReceipt> {
    throw new FirstEffect(`append ${record.event} -> ${record.state}`);
  }
}

async function resume(storeDir: string): Promise<string> {
  const seen: string[] = [];
  const observer = (event: RunEvent) => {
    if (event.type === 'reconciled') seen.push(`${event.call.id} ${event.decision}`);
    // A tool run is an effect too; the tool cannot stop the run (its throw becomes a result), so it is reported.
    if (event.type === 'tool-started') seen.push(`ran ${event.call.id}`);
  };
  const model = {
    name: 'bench-stop',
    createMessage: async () => {
      throw new FirstEffect('model call');
    },
  };
  try {
    await resumeRun({ store: new StopAtFirstWrite(storeDir), model, tools: [fetchPage], observer });
  } catch (error) {
    if (error instanceof FirstEffect) return `${seen.join(', ') || 'nothing to reconcile'}; then ${error.what}`;
    throw error;
  }
  throw new Error('the resumed run finished without making an effect');
}

function readParse(journal: string): string {
  const bytes = fs.readFileSync(journal);
  const documents: unknown[] = [];
  for (let start = 0, end = bytes.indexOf(0x0a); end !== -1; start = end + 1, end = bytes.indexOf(0x0a, start)) {
    // Each line is an 8-digit checksum and a space before the JSON; the commit mark is not JSON.
    if (bytes[start] === 0x40) continue;
    documents.push(JSON.parse(bytes.toString('utf8', start + 9, end)));
  }
  return `${documents.length} documents`;
}

async function main(): Promise<void> {
  const [mode, target] = process.argv.slice(2);
  if (!target || (mode !== 'resume' && mode !== 'read-parse')) throw new Error('usage: resume-child.ts resume|read-parse <path>');
  // A process that resumes a run has its tools ready first; compiling their input schemas
  // (~100 ms, once per process, cached) is set-up, not load or reconcile, so it is done here.
  new ToolRegistry([fetchPage]);
  const baseRssKb = process.resourceUsage().maxRSS;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const detail = mode === 'resume' ? await resume(target) : readParse(target);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const measure: ChildMeasure = { ms, cpuMs: (cpu.user + cpu.system) / 1000, baseRssKb, peakRssKb: process.resourceUsage().maxRSS, detail };
  process.stdout.write(`${JSON.stringify(measure)}\n`);
}

await main();
