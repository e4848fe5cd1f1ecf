/** The README's programmatic example, as printed (the first ```js block of "## Programmatic use"). */
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './cli.ts';

export function readmeProgrammaticExample(): string {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Programmatic use'));
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error('README.md: no ```js block under "## Programmatic use"');
  return code;
}

/** The README's quick start, as printed (the ```js block of "## Quick start"). */
export function readmeQuickStart(): string {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error('README.md: no ```js block under "## Quick start"');
  return code;
}

/** What the example prints when it finishes a run (on the resume after a crash, or a fresh run). */
export const EXAMPLE_DONE_OUTPUT = 'done Invoice sent.\n1 ledger entry\n';
