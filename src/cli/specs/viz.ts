/** `durable-agent viz`: its options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { fileRun, readDir, readFileRun } from '../options/target.ts';

export interface VizArgs {
  command: 'viz';
  dir: string;
  /** --run ID: the run of that id in DIR's folder of runs; null: DIR's own run. */
  runId: string | null;
  /** Where the page goes; by default DIR/.durable-agent/viz.html (viz-ID.html for a run by id). */
  out: string | null;
  open: boolean;
  /** Print the machine as Stately Studio source instead of writing the page. */
  stately: boolean;
}

export const vizSpec = command({
  name: 'viz',
  words: [],
  summary: "the loop as a diagram with a run's history on it, one HTML page",
  description:
    "Writes one self-contained HTML page: the machine as a diagram and the run's journal as a timeline you can\n" +
    "step through: DIR's own run, or with --run ID a run of DIR's folder of runs. Without a run it draws the machine\n" +
    'alone. --stately prints the machine for Stately Studio.',
  options: [
    readDir,
    fileRun,
    option({ key: 'out', type: 'string', value: 'FILE', help: 'write the page to FILE', defaultText: 'DIR/.durable-agent/viz.html, viz-ID.html with --run' }),
    option({ key: 'open', type: 'boolean', help: "hand the page to the desktop's opener (xdg-open, open, start); if none can run, say so and where the page is" }),
    option({ key: 'stately', type: 'boolean', help: 'print the machine as Stately Studio source to stdout instead (no page)' }),
  ],
  examples: ['durable-agent viz --dir demo-run --open', 'durable-agent viz --run invoice-acme', 'durable-agent viz --stately > agent-loop.stately.js'],
  parse: (values, { cwd }): VizArgs => {
    if (values.stately && (values.out !== undefined || values.open || values.run !== undefined)) {
      throw new UsageError('--stately prints the machine to stdout; it takes no --out, --open or --run (redirect it: > agent-loop.stately.js).');
    }
    return { command: 'viz', dir: values.dir ?? cwd, runId: readFileRun(values.run), out: values.out ?? null, open: values.open, stately: values.stately };
  },
});
