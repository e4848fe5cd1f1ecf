/**
 * The guide's promises, checked where its pages stand (docs/ and its subfolders): every page is
 * in the README's guide list (its links: doc-links.test.ts); the Portuguese
 * getting-started page's commands run as printed, each printing the lines it shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, runCli } from '../helpers/cli.ts';
import { consoleSteps } from '../helpers/console-steps.ts';
import { DEMO_PLAIN_LINES } from '../helpers/demo-lines.ts';
import { blocksOf, firstBlockUnder, guidePages } from '../helpers/readme-example.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const GETTING_STARTED_PT = 'docs/pt/comecando.md';

/** The relative links of a page, outside its code blocks. */
function relativeLinks(file: string): string[] {
  const text = fs.readFileSync(path.join(REPO, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((link) => !/^[a-z]+:/.test(link) && !link.startsWith('#'));
}

/** Runs the ```console blocks of a page as printed, each in a scratch directory of its own. */
function runsAsPrinted(file: string, blocks = blocksOf(file, 'console')): void {
  expect(blocks.length, file).toBeGreaterThan(0);
  for (const block of blocks) {
    const cwd = tempDir();
    for (const step of consoleSteps(block)) {
      // A reader's shell: no message locale but the one the command sets.
      const run = runCli(step.args, { cwd, env: { LC_ALL: undefined, LC_MESSAGES: undefined, LANG: undefined, ...step.env } });
      expect(run.stdout, step.command).toBe(step.stdout);
      expect(run.code, `${step.command}\n${run.stderr}`).toBe(step.exitCode);
    }
  }
}

describe('the guide', () => {
  it("lists every page of docs/, its subfolders included, in the README's guide list", () => {
    const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const guide = readme.slice(readme.indexOf('## The guide'));
    const listed = [...guide.matchAll(/^- \[[^\]]+\]\((docs\/[^)]+\.md)\)/gm)].map((match) => match[1]);
    expect(guidePages()).toContain(GETTING_STARTED_PT);
    expect([...listed].sort()).toEqual([...guidePages()].sort());
  });
});

describe('Começando, the Portuguese getting-started page', () => {
  it('starts with the install-and-run command, which runs the demo in Portuguese', () => {
    const [install] = blocksOf(GETTING_STARTED_PT, 'sh');
    const commands = install!.trim().split('\n').map((line) => line.split('#')[0]!.trim());
    expect(commands).toEqual(['npm ci && npx durable-agent demo --lang pt --dir demo-run']);
    const demo = commands[0]!.split('&&')[1]!.trim().split(/\s+/).slice(2);
    const run = runCli(demo, { cwd: tempDir() });
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual([...DEMO_PLAIN_LINES.slice(0, -1), '[done] Relatório escrito em report.txt, tarefa concluída.']);
  });

  it('links the code where each idea of the lesson lives', () => {
    const code = relativeLinks(GETTING_STARTED_PT).filter((link) => /\.\.\/\.\.\/(src|machines)\//.test(link));
    expect(code).toEqual(expect.arrayContaining(['../../src/reconcile/reconcile.ts', '../../src/runtime/record-outcomes.ts', '../../src/runtime/crash-points.ts', '../../src/lang/pt.ts']));
  });

  it('runs each of its console sessions as printed: every command prints the lines under it and exits with the code it says', () => {
    runsAsPrinted(GETTING_STARTED_PT);
  });
});

describe("the README's demo", () => {
  it('is killed and resumed as printed', () => {
    // The quick start's own console block reads the runs its program made: readme-install.test.ts runs it.
    runsAsPrinted('README.md', [firstBlockUnder('README.md', "## The lesson's demo", 'console')]);
  });
});
