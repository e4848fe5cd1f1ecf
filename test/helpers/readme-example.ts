/**
 * The runnable examples of the README and the guide (docs/, its subfolders included), as
 * printed: the first ```js block under a heading, the install's ```sh block, every block of a kind on a page, and the
 * guide's pages themselves.
 */
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from './cli.ts';
import { docFiles } from './doc-blocks.ts';

/** The first ```FENCE block after `heading` in `file` (a path from the repository's root). */
export function firstBlockUnder(file: string, heading: string, fence = 'js'): string {
  const text = fs.readFileSync(path.join(REPO, file), 'utf8');
  const at = text.indexOf(heading);
  const code = at < 0 ? undefined : new RegExp(`\`\`\`${fence}\\n([\\s\\S]*?)\`\`\``).exec(text.slice(at))?.[1];
  if (!code) throw new Error(`${file}: no \`\`\`${fence} block under "${heading}"`);
  return code;
}

/** Every ```FENCE block of `file`, in order. */
export function blocksOf(file: string, fence: string): string[] {
  const text = fs.readFileSync(path.join(REPO, file), 'utf8');
  return [...text.matchAll(new RegExp(`^\`\`\`${fence}\\n([\\s\\S]*?)^\`\`\``, 'gm'))].map((match) => match[1]!);
}

/** Every page of the guide (docs/pt/comecando.md too), from the repository's root: not the site's home page, nor the API pages TypeDoc writes. */
export function guidePages(): string[] {
  return docFiles().filter((file) => file !== 'README.md' && file !== 'docs/index.md');
}

/** The programmatic example (the first ```js block of docs/programmatic-use.md). */
export function readmeProgrammaticExample(): string {
  return firstBlockUnder('docs/programmatic-use.md', '# Programmatic use');
}

/**
 * The install into a project (the ```sh block of "### In your own project"), a command a line:
 * the first runs in a checkout of this repository, the rest in the project that installs the tarball.
 */
export function readmeInstall(): string[] {
  return firstBlockUnder('README.md', '### In your own project', 'sh')
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

/** The agents module of "Your agent from the command line" in docs/programmatic-use.md, as printed. */
export function docsAgentsModule(): string {
  return firstBlockUnder('docs/programmatic-use.md', '### Your agent from the command line');
}
