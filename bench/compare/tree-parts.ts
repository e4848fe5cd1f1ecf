/**
 * The parts of one tree a comparison runs, loaded from that tree's own TypeScript (through tsx,
 * by file URL), so that this tree and REF run side by side in one process, each on its own code
 * and the same node_modules. A part REF does not have is said by name, for its benchmark to be
 * skipped rather than the bench to crash.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Benchmark } from './args.ts';

/** Only what the benches call, typed loosely: REF's types may differ from ours. */
export interface TreeParts {
  benchScript(turns: number): unknown[];
  benchRunOptions(store: unknown, script: unknown[]): Record<string, unknown>;
  fetchPage: unknown;
  startRun(options: Record<string, unknown>): Promise<{ status: string; turn: number }>;
  resumeRun(options: Record<string, unknown>): Promise<{ status: string; turn: number }>;
  MemoryStore: new (name?: string) => unknown;
  /** Given a folder named .durable-agent, every version takes it as the run's state folder. */
  FileStore: new (dir: string) => { close(): void; journalPath?: string };
}

/** Where each part lives in a tree, by the file that exports it. */
export const PART_FILES: Record<keyof TreeParts, string> = {
  benchScript: 'bench/workload.ts',
  benchRunOptions: 'bench/workload.ts',
  fetchPage: 'bench/workload.ts',
  startRun: 'src/runtime/run-api.ts',
  resumeRun: 'src/runtime/run-api.ts',
  MemoryStore: 'src/store/memory-store.ts',
  FileStore: 'src/store/file-store.ts',
};

export const PARTS_NEEDED: Record<Benchmark, Array<keyof TreeParts>> = {
  turn: ['benchScript', 'benchRunOptions', 'startRun', 'MemoryStore'],
  file: ['benchScript', 'benchRunOptions', 'startRun', 'FileStore'],
  resume: ['benchScript', 'benchRunOptions', 'fetchPage', 'startRun', 'resumeRun', 'FileStore'],
  // Run by worker processes of each tree's build, not from this process: fleet.ts checks its own parts.
  fleet: [],
};

export type Loaded = { ok: true; parts: TreeParts } | { ok: false; missing: string };

/** Loads the parts `benchmark` needs from the tree at `dir`; `label` names the tree in what is missing. */
export async function loadParts(dir: string, label: string, benchmark: Benchmark): Promise<Loaded> {
  const parts: Record<string, unknown> = {};
  for (const name of PARTS_NEEDED[benchmark]) {
    const file = PART_FILES[name];
    const full = path.join(dir, file);
    if (!fs.existsSync(full)) return { ok: false, missing: `${label} has no ${file}` };
    let module: Record<string, unknown>;
    try {
      module = (await import(pathToFileURL(full).href)) as Record<string, unknown>;
    } catch (error) {
      return { ok: false, missing: `${label}'s ${file} does not load: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` };
    }
    if (module[name] === undefined) return { ok: false, missing: `${label}'s ${file} exports no ${name}` };
    parts[name] = module[name];
  }
  return { ok: true, parts: parts as unknown as TreeParts };
}
