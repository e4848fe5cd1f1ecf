/**
 * One resume of a finished run, in a fresh process, on the code of the tree named:
 *
 *   resume-child.ts <tree> <state folder>
 *
 * Imports that tree's runtime, file store and bench workload, then times resumeRun on the run
 * of the state folder (a finished run: it answers with its result; the model is never asked).
 * Prints one JSON line: the wall and CPU time of the resume.
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

export interface ResumeMeasure {
  ms: number;
  /** CPU time of the process (user + system) over the resume. */
  cpuMs: number;
  status: string;
  turn: number;
}

async function importOf(tree: string, file: string): Promise<Record<string, unknown>> {
  return (await import(pathToFileURL(path.join(tree, file)).href)) as Record<string, unknown>;
}

async function main(): Promise<void> {
  const [tree, stateFolder] = process.argv.slice(2);
  if (!tree || !stateFolder) throw new Error('usage: resume-child.ts <tree> <state folder>');
  const { resumeRun } = (await importOf(tree, 'src/runtime/run-api.ts')) as { resumeRun: (options: object) => Promise<{ status: string; turn: number }> };
  const { FileStore } = (await importOf(tree, 'src/store/file-store.ts')) as { FileStore: new (dir: string) => { close(): void } };
  const { fetchPage } = await importOf(tree, 'bench/workload.ts');
  // A process that resumes a run has its tools ready first: compiling their input schemas (once
  // per process) is set-up, not the resume, as in the main bench's resume-child.ts.
  const registry = await importOf(tree, 'src/tools/tool-registry.ts').catch(() => ({}) as Record<string, unknown>);
  const ToolRegistry = registry.ToolRegistry as (new (tools: unknown[]) => unknown) | undefined;
  if (ToolRegistry) new ToolRegistry([fetchPage]);
  const model = {
    name: 'bench-finished',
    createMessage: async () => {
      throw new Error('a finished run asked its model for a reply on resume');
    },
  };
  const store = new FileStore(stateFolder);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await resumeRun({ store, model, tools: [fetchPage] });
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  store.close();
  const measure: ResumeMeasure = { ms, cpuMs: (cpu.user + cpu.system) / 1000, status: result.status, turn: result.turn };
  process.stdout.write(`${JSON.stringify(measure)}\n`);
}

await main();
