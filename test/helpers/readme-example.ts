/** The runnable examples of the README and the guide (docs/), as printed: the first ```js (or ```sh) block under a heading. */
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './cli.ts';

function firstBlockUnder(file: string, heading: string, language = 'js'): string {
  const text = fs.readFileSync(path.join(REPO, file), 'utf8');
  const at = text.indexOf(heading);
  const code = at < 0 ? undefined : new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(text.slice(at))?.[1];
  if (!code) throw new Error(`${file}: no \`\`\`${language} block under "${heading}"`);
  return code;
}

/** The programmatic example (the first ```js block of docs/programmatic-use.md). */
export function readmeProgrammaticExample(): string {
  return firstBlockUnder('docs/programmatic-use.md', '# Programmatic use');
}

/**
 * The install (the ```sh block of "## Install"), a command a line: the first runs in a checkout
 * of this repository, the rest in the project that installs the tarball.
 */
export function readmeInstall(): string[] {
  return firstBlockUnder('README.md', '## Install', 'sh')
    .trim()
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, ''));
}

/** The quick start (the ```js block of "## Quick start"). */
export function readmeQuickStart(): string {
  return firstBlockUnder('README.md', '## Quick start');
}

/** The webhook receiver (the ```js block after "**Webhooks.**" in docs/fleet.md). */
export function readmeWebhookReceiver(): string {
  return firstBlockUnder('docs/fleet.md', '**Webhooks.**');
}

/** What the example prints when it finishes a run (on the resume after a crash, or a fresh run). */
export const EXAMPLE_DONE_OUTPUT = 'done Invoice sent.\n1 ledger entry\n';
