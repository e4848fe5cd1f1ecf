/** The runnable examples of the README and the guide (docs/), as printed: the first ```js block under a heading. */
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './cli.ts';

function firstJsBlockUnder(file: string, heading: string): string {
  const text = fs.readFileSync(path.join(REPO, file), 'utf8');
  const at = text.indexOf(heading);
  const code = at < 0 ? undefined : /```js\n([\s\S]*?)```/.exec(text.slice(at))?.[1];
  if (!code) throw new Error(`${file}: no \`\`\`js block under "${heading}"`);
  return code;
}

/** The programmatic example (the first ```js block of docs/programmatic-use.md). */
export function readmeProgrammaticExample(): string {
  return firstJsBlockUnder('docs/programmatic-use.md', '# Programmatic use');
}

/** The quick start (the ```js block of "## Quick start"). */
export function readmeQuickStart(): string {
  return firstJsBlockUnder('README.md', '## Quick start');
}

/** The webhook receiver (the ```js block after "**Webhooks.**" in docs/fleet.md). */
export function readmeWebhookReceiver(): string {
  return firstJsBlockUnder('docs/fleet.md', '**Webhooks.**');
}

/** What the example prints when it finishes a run (on the resume after a crash, or a fresh run). */
export const EXAMPLE_DONE_OUTPUT = 'done Invoice sent.\n1 ledger entry\n';

/** The agents module of "Your agent from the command line" in docs/programmatic-use.md, as printed. */
export function docsAgentsModule(): string {
  return firstJsBlockUnder('docs/programmatic-use.md', '### Your agent from the command line');
}
