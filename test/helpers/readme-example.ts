/** The README's runnable examples, as printed: the first ```js block under a heading. */
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './cli.ts';

function firstJsBlockUnder(heading: string): string {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(heading));
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error(`README.md: no \`\`\`js block under "${heading}"`);
  return code;
}

/** The programmatic example (the first ```js block of "## Programmatic use"). */
export function readmeProgrammaticExample(): string {
  return firstJsBlockUnder('## Programmatic use');
}

/** The quick start (the ```js block of "## Quick start"). */
export function readmeQuickStart(): string {
  return firstJsBlockUnder('## Quick start');
}

/** The webhook receiver (the ```js block after "**Webhooks.**"). */
export function readmeWebhookReceiver(): string {
  return firstJsBlockUnder('**Webhooks.**');
}

/** What the example prints when it finishes a run (on the resume after a crash, or a fresh run). */
export const EXAMPLE_DONE_OUTPUT = 'done Invoice sent.\n1 ledger entry\n';
