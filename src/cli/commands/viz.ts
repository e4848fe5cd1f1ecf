/**
 * `durable-agent viz`: writes the visualizer page for the run in DIR (or prints the machine for
 * Stately Studio with --stately).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { agentLoopMachine } from '../../../machines/agent-loop.machine.ts';
import { machineGraphOf } from '../../../visualizer/machine-graph.ts';
import { statelySource } from '../../../visualizer/stately-source.ts';
import { vizPage } from '../../../visualizer/viz-page.ts';
import { FileStore } from '../../store/file-store.ts';
import type { VizArgs } from '../args.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { STATE_DIR } from '../state-dir.ts';

export const VIZ_FILE = 'viz.html';

export async function vizCommand(args: VizArgs, writers: Writers, env: NodeJS.ProcessEnv): Promise<number> {
  if (args.stately) {
    writers.out(statelySource(machineGraphOf(agentLoopMachine), 'machines/agent-loop.machine.ts').trimEnd());
    return EXIT.done;
  }
  const dir = path.resolve(args.dir);
  const store = new FileStore(path.join(dir, STATE_DIR));
  const page = await vizPage(store);
  const out = path.resolve(args.out ?? path.join(dir, STATE_DIR, VIZ_FILE));
  writeFileAtomically(out, page.html);
  const run = page.run;
  if (run) {
    const stops = run.processes.filter((p) => p.end === 'stopped').length;
    writers.out(`[viz] wrote ${out}: ${run.steps.length} records of run ${run.runId} (${run.state}, ${run.processes.length} processes, ${stops} stopped and resumed)`);
  } else {
    writers.out(`[viz] wrote ${out}: the machine only`);
    writers.err(`[viz] no run in ${store.location}: run durable-agent demo --dir ${args.dir} first to see a run's history on the diagram.`);
  }
  if (args.open) await openInBrowser(out, writers, env);
  return EXIT.done;
}

/** Written whole or not at all: a reader never sees half a page. */
function writeFileAtomically(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/**
 * Hands the page to the desktop's opener and waits until it has started (or failed to): the
 * page is written either way, so failing here only warns.
 */
async function openInBrowser(file: string, writers: Writers, env: NodeJS.ProcessEnv): Promise<void> {
  const [command, ...prefix] =
    process.platform === 'darwin' ? ['open'] : process.platform === 'win32' ? ['cmd', '/c', 'start', '""'] : ['xdg-open'];
  await new Promise<void>((resolve) => {
    const child = spawn(command!, [...prefix, file], { detached: true, stdio: 'ignore', env });
    child.once('spawn', () => {
      child.unref();
      resolve();
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      writers.err(`[viz] could not open a browser (${command}: ${error.code ?? error.message}): open ${file} yourself.`);
      resolve();
    });
  });
}
