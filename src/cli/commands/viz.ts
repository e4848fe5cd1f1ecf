/**
 * `durable-agent viz`: writes the visualizer page for the run in DIR, or for a run of its folder
 * by id (or prints the machine for Stately Studio with --stately).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { agentLoopMachine } from '../../../machines/agent-loop.machine.ts';
import { machineGraphOf } from '../../../visualizer/machine-graph.ts';
import { statelySource } from '../../../visualizer/stately-source.ts';
import { vizPage } from '../../../visualizer/viz-page.ts';
import type { VizArgs } from '../args.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { StoreMissingError } from '../../store/errors.ts';
import { fileStoreOf, stateFolderOf } from '../run-store.ts';
import { runIdsIn, shownIds } from '../runs-by-id-advice.ts';
import { NoSuchDirectoryError } from '../errors.ts';
import { cliCommand, dirWords, shellQuote } from '../../words/shell-command.ts';

export const VIZ_FILE = 'viz.html';

export async function vizCommand(args: VizArgs, writers: Writers, env: NodeJS.ProcessEnv): Promise<number> {
  if (args.stately) {
    writers.out(statelySource(machineGraphOf(agentLoopMachine), 'machines/agent-loop.machine.ts').trimEnd());
    return EXIT.done;
  }
  const dir = path.resolve(args.dir);
  mustBeDirectory(dir);
  const { runId } = args;
  const store = fileStoreOf(dir, runId);
  // A run asked for by its id is drawn or refused: a page of the machine alone would hide the typo.
  if (runId !== null && !(await store.exists())) throw new StoreMissingError(store.location, 'read');
  // `…fork --dir D [--run ID] --at SEQ --to D[-ID]-at-SEQ`: a new directory beside the run's, named after the run and the step.
  const forkCommand = {
    before: cliCommand(env, ['fork', '--dir', dir, ...(runId === null ? [] : ['--run', runId]), '--at']),
    after: `--to ${shellQuote(`${dir}${runId === null ? '' : `-${runId}`}-at-`)}`,
  };
  const page = await vizPage(store, forkCommand);
  const out = path.resolve(args.out ?? path.join(stateFolderOf(dir), runId === null ? VIZ_FILE : `viz-${runId}.html`));
  writeFileAtomically(out, page.html);
  const run = page.run;
  if (run) {
    const stops = run.processes.filter((p) => p.end === 'stopped').length;
    const processes = `${run.processes.length} ${run.processes.length === 1 ? 'process' : 'processes'}`;
    writers.out(`[viz] wrote ${out}: ${run.steps.length} records of run ${run.runId} (${run.state}, ${processes}, ${stops} stopped and resumed)`);
  } else {
    writers.out(`[viz] wrote ${out}: the machine only`);
    writers.err(`[viz] no run in ${store.location}: ${noRunAdvice(dir, env)}`);
  }
  if (args.open) await openInBrowser(out, writers, env);
  return EXIT.done;
}

/** What to draw instead: a run of the folder by its id, or a run to start. */
function noRunAdvice(dir: string, env: NodeJS.ProcessEnv): string {
  const ids = runIdsIn(stateFolderOf(dir));
  if (ids.length === 0) return `run ${cliCommand(env, ['demo', ...dirWords(dir)])} first to see a run's history on the diagram.`;
  return `the folder holds runs by id (${shownIds(ids)}): draw one with ${cliCommand(env, ['viz', ...dirWords(dir), '--run', ids[0]!])}.`;
}

/** Reading a directory that is not there would write a page into a new, empty one. */
function mustBeDirectory(dir: string): void {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (!stat?.isDirectory()) throw new NoSuchDirectoryError('--dir', dir, stat !== undefined);
}

/** Written whole or not at all: a reader never sees half a page. */
function writeFileAtomically(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/** How long an opener may take to say it failed; one still running by then is taken to work. */
const OPENER_VERDICT_MS = 3_000;

/**
 * Hands the page to the desktop's opener and waits until it has handed it on, failed, or kept
 * running for a while. The page is written either way, so a failure only says so (exit 0): with
 * no opener at all (ENOENT), or one that gives up (xdg-open exits 3 where it finds no browser).
 */
async function openInBrowser(file: string, writers: Writers, env: NodeJS.ProcessEnv): Promise<void> {
  const [command, ...prefix] =
    process.platform === 'darwin' ? ['open'] : process.platform === 'win32' ? ['cmd', '/c', 'start', '""'] : ['xdg-open'];
  const failed = (why: string) => writers.err(`[viz] could not open a browser (${why}): open ${file} yourself.`);
  await new Promise<void>((resolve) => {
    const child = spawn(command!, [...prefix, file], { detached: true, stdio: 'ignore', env });
    const timer = setTimeout(() => {
      child.unref();
      resolve();
    }, OPENER_VERDICT_MS);
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      failed(`${command}: ${error.code ?? error.message}`);
      resolve();
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) failed(`${command} exited with ${signal ?? `code ${code}`}`);
      resolve();
    });
  });
}
