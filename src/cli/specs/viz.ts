/** `durable-agent viz`: its options and their parse. */
import { UsageError } from '../usage-error.ts';
import { command } from '../options/command.ts';
import { option } from '../options/option.ts';
import { readDir } from '../options/target.ts';

export interface VizArgs {
  command: 'viz';
  dir: string;
  /** Where the page goes; by default DIR/.durable-agent/viz.html. */
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
    'step through. Without a run in DIR it draws the machine alone. --stately prints the machine for Stately Studio.',
  options: [
    readDir,
    option({ key: 'out', type: 'string', value: 'FILE', help: 'write the page to FILE', defaultText: 'DIR/.durable-agent/viz.html' }),
    option({ key: 'open', type: 'boolean', help: "hand the page to the desktop's opener (xdg-open, open, start); if none can run, say so and where the page is" }),
    option({ key: 'stately', type: 'boolean', help: 'print the machine as Stately Studio source to stdout instead (no page)' }),
  ],
  examples: ['durable-agent viz --dir demo-run --open', 'durable-agent viz --stately > agent-loop.stately.js'],
  parse: (values, { cwd }): VizArgs => {
    if (values.stately && (values.out !== undefined || values.open)) {
      throw new UsageError('--stately prints the machine to stdout; it takes no --out or --open (redirect it: > agent-loop.stately.js).');
    }
    return { command: 'viz', dir: values.dir ?? cwd, out: values.out ?? null, open: values.open, stately: values.stately };
  },
});
