/**
 * Forks on the visualizer's page, in a real browser (Debian's chromium through playwright-core),
 * for demo runs driven by the real CLI: the fork point of a child, the forks of its parent, and
 * time travel printing the fork command of the selected step, which then works as printed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.ts';
import { REPO, runCliAsync } from '../helpers/cli.ts';
import { chromiumPresent } from '../helpers/system-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const ARTIFACTS = path.join(REPO, 'test', 'artifacts');

async function cli(args: string[], dir: string) {
  const run = await runCliAsync(args, { cwd: dir });
  expect(run.code, `${args.join(' ')}\n${run.stdout}\n${run.stderr}`).toBe(0);
  return run;
}

async function writePage(dir: string): Promise<string> {
  const out = path.join(dir, 'viz.html');
  await cli(['viz', '--dir', dir, '--out', out], dir);
  return pathToFileURL(out).href;
}

const runIdOf = async (dir: string) => (JSON.parse((await cli(['status', '--json', '--dir', dir], dir)).stdout) as { runId: string }).runId;

let browser: Browser;

beforeAll(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  if (chromiumPresent()) browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

async function open(url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(url);
  await page.locator('li.step[aria-selected="true"]').waitFor();
  return { page, errors };
}

describe.skipIf(!chromiumPresent())('forks on the visualizer page', () => {
  it("marks a child's fork point and its parent's fork, and prints a fork command for the selected step that works as printed", async () => {
    const root = tempDir('da-viz-fork-');
    const parent = path.join(root, 'parent');
    fs.mkdirSync(parent);
    await cli(['demo', '--plain'], parent);
    const child = path.join(root, 'child');
    await cli(['fork', '--dir', parent, '--at', '8', '--to', child], parent);
    await cli(['demo', '--resume', '--plain', '--dir', child], child);
    const parentId = await runIdOf(parent);
    const childId = await runIdOf(child);

    const childPage = await open(await writePage(child));
    const point = childPage.page.locator('li.step[data-seq="8"] + li.marker.fork-point');
    await expect(point.textContent()).resolves.toBe(`⑂ fork point records 0 to 8 are those of run ${parentId} (${path.join(parent, '.durable-agent')}); the records after are this run's own.`);
    await expect(childPage.page.locator('li.marker.fork').count()).resolves.toBe(1);
    // The parent's process did not stop at the fork point: no "stopped" marker, one resume of the child.
    await expect(childPage.page.locator('li.marker.crash').count()).resolves.toBe(0);
    await expect(childPage.page.locator('li.marker.resume').count()).resolves.toBe(1);
    await childPage.page.screenshot({ path: path.join(ARTIFACTS, 'viz-fork-child-1280x800.png') });

    const { page, errors } = await open(await writePage(parent));
    await expect(page.locator('li.step[data-seq="8"] + li.marker.forked-here').textContent()).resolves.toBe(
      `⑂ forked run ${childId} (${path.join(child, '.durable-agent')}) starts from record 8 of this run.`,
    );
    // Time travel: the selected step's fork command.
    await page.locator('li.step[data-seq="4"]').click();
    await expect(page.locator('.context').getAttribute('data-seq')).resolves.toBe('4');
    const command = (await page.locator('.fork-command code').textContent())!;
    expect(command).toMatch(new RegExp(`^(npx --no-install )?durable-agent fork --dir ${parent} --at 4 --to ${parent}-at-4$`));
    await page.keyboard.press('ArrowRight');
    await expect(page.locator('.fork-command code').textContent()).resolves.toMatch(/ --at 5 --to .*-at-5$/);
    expect(errors).toEqual([]);

    // The command works as printed (the words after the invocation).
    const words = command.replace(/^(npx --no-install )?durable-agent /, '').split(' ');
    const forked = await cli(words, parent);
    expect(forked.stdout).toContain(`at record 4 of 0-`);
    expect(fs.existsSync(path.join(`${parent}-at-4`, '.durable-agent', 'journal.jsonl'))).toBe(true);
  }, 180_000); // a browser, two runs and several CLI commands: slow on a crowded machine
});
