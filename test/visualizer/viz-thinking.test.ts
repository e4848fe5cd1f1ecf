/**
 * Thinking and server tool blocks on the visualizer's page, for a run through the real SDK and the
 * fake Messages API (thinking, redacted thinking, a search, a fetch, bash, code execution paused
 * and continued, a text editor call): each block of the journal on the page, thinking collapsed in
 * a <details> (its text inside, "redacted thinking" for a redacted one), each server tool call with
 * its tool and input, each result with its kind; no signature, redacted data or encrypted content
 * in the page. In a real browser (Debian's chromium), the details are closed until clicked.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { ContentBlock } from '../../machines/agent-loop.types.ts';
import { machineGraphOf } from '../../visualizer/machine-graph.ts';
import { runViewOf } from '../../visualizer/run-timeline.ts';
import type { BlockView } from '../../visualizer/viz-data.ts';
import { vizPage } from '../../visualizer/viz-page.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { REPO } from '../helpers/cli.ts';
import { chromiumPresent } from '../helpers/system-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { thinkingRun } from '../helpers/thinking-run.ts';

const graph = machineGraphOf(agentLoopMachine);

/** The values no page may hold as text: signatures, redacted thinking's data, encrypted fields. */
function sealedIn(blocks: readonly ContentBlock[]): string[] {
  const found: string[] = [];
  const walk = (value: unknown, key = '', type = ''): void => {
    if (typeof value === 'string') {
      if (key.startsWith('encrypted_') || key === 'signature' || (key === 'data' && type === 'redacted_thinking')) found.push(value);
    } else if (Array.isArray(value)) value.forEach((inner) => void walk(inner));
    else if (value !== null && typeof value === 'object') for (const [k, inner] of Object.entries(value)) walk(inner, k, String((value as { type?: unknown }).type));
  };
  walk(blocks);
  return found;
}

async function thinkingPage() {
  const run = await thinkingRun({ stream: false });
  const loaded = await run.store.load();
  const view = runViewOf(run.store.location, loaded, graph);
  const page = await vizPage(run.store);
  // The replies as received: each is an assistant message of the journal, block for block.
  const replyBlocks = run.events.flatMap((event) => (event.type === 'model-reply' ? event.reply.content : []));
  run.store.close();
  return { view, html: page.html, replyBlocks };
}

describe('the run view of a run with thinking and server tool blocks (no browser)', () => {
  it('has every block of the journal, thinking with its text, each server tool call and result in words, nothing sealed', async () => {
    const { view, html, replyBlocks } = await thinkingPage();
    const blocks = view.messages.flatMap((message) => message.blocks);
    const assistant = view.messages.filter((message) => message.role === 'assistant').flatMap((message) => message.blocks);
    const of = <K extends BlockView['kind']>(kind: K) => blocks.filter((block): block is Extract<BlockView, { kind: K }> => block.kind === kind);

    // Each block of each reply is on the page, in its order, by its kind.
    expect(assistant.map((block) => (block.kind === 'server_tool_result' || block.kind === 'other' ? block.type : block.kind === 'thinking' ? (block.redacted ? 'redacted_thinking' : 'thinking') : block.kind))).toEqual(
      replyBlocks.map((block) => block.type),
    );
    expect(of('other')).toEqual([]);

    const thinking = of('thinking');
    expect(thinking).toHaveLength(6);
    expect(thinking[0]).toMatchObject({ redacted: false, text: 'Thought 1: 1 messages so far; the next step follows.', summary: 'thinking (52 characters): Thought 1: 1 messages so far; the next step follows.' });
    expect(thinking[0]!.sealed).toMatch(/^signature: \d+ characters, not shown$/);
    expect(thinking[1]).toMatchObject({ redacted: true, text: '', summary: 'redacted thinking' });
    expect(thinking[1]!.sealed).toMatch(/^data: \d+ characters, encrypted, not shown$/);

    expect(of('server_tool_use').map((block) => [block.name, block.summary])).toEqual([
      ['web_search', 'web_search "durable agent runtimes"'],
      ['web_fetch', 'web_fetch https://example.com/a'],
      ['bash_code_execution', 'bash_code_execution ls -la /tmp'],
      ['code_execution', 'code_execution print(sum(range(10))) print("done")'],
      ['text_editor_code_execution', 'text_editor_code_execution create notes.txt'],
    ]);
    expect(JSON.parse(of('server_tool_use')[0]!.input)).toEqual({ query: 'durable agent runtimes' });
    expect(of('server_tool_result').map((block) => [block.tool, block.toolUseId, block.summary])).toEqual([
      ['web_search', 'srvtoolu_fake_001', '2 results'],
      ['web_fetch', 'srvtoolu_fake_002', 'fetched https://example.com/a'],
      ['bash_code_execution', 'srvtoolu_fake_003', 'exit 0, output: ran: ls -la /tmp'],
      ['code_execution', 'srvtoolu_fake_004', 'exit 0, output encrypted'],
      ['text_editor_code_execution', 'srvtoolu_fake_005', 'file created'],
    ]);
    // The plain fields of a result stay (a search result's URL and title); the encrypted ones are named by their size.
    const search = JSON.parse(of('server_tool_result')[0]!.json) as { content: Array<Record<string, unknown>> };
    expect(search.content[0]).toMatchObject({ type: 'web_search_result', title: 'Result 1', encrypted_content: expect.stringMatching(/^\[encrypted, \d+ characters\]$/) });

    const sealed = sealedIn(replyBlocks);
    expect(sealed).toHaveLength(9);
    for (const value of sealed) expect(html).not.toContain(value);
    expect(html).toContain('Thought 1: 1 messages so far');
  });
});

describe.skipIf(!chromiumPresent())('the page of a run with thinking and server tool blocks', () => {
  it('shows thinking collapsed until clicked, and each server tool call and result with its words', async () => {
    const { view, html } = await thinkingPage();
    const file = path.join(tempDir('da-viz-thinking-'), 'viz.html');
    fs.writeFileSync(file, html);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${pathToFileURL(file).href}#seq=${view.steps.at(-1)!.seq}`);
      await page.locator('li.step[aria-selected="true"]').waitFor();

      const thoughts = page.locator('.context details.block.thinking');
      await expect(thoughts.count()).resolves.toBe(6);
      const first = thoughts.first();
      await expect(first.evaluate((node) => (node as HTMLDetailsElement).open)).resolves.toBe(false);
      await expect(first.locator('summary').textContent()).resolves.toBe('thinking (52 characters): Thought 1: 1 messages so far; the next step follows.');
      await expect(first.locator('pre').isVisible()).resolves.toBe(false);
      await first.locator('summary').click();
      await expect(first.evaluate((node) => (node as HTMLDetailsElement).open)).resolves.toBe(true);
      await expect(first.locator('pre').textContent()).resolves.toBe('Thought 1: 1 messages so far; the next step follows.');
      await expect(page.locator('.context details.block.thinking.redacted summary').first().textContent()).resolves.toBe('redacted thinking');

      const uses = await page.locator('.context .block.server-tool-use').evaluateAll((nodes) => nodes.map((node) => node.querySelector('.tool-words')!.textContent));
      expect(uses).toEqual([
        'web_search "durable agent runtimes"',
        'web_fetch https://example.com/a',
        'bash_code_execution ls -la /tmp',
        'code_execution print(sum(range(10))) print("done")',
        'text_editor_code_execution create notes.txt',
      ]);
      const results = await page.locator('.context .block.server-tool-result .tool-words').allTextContents();
      expect(results).toEqual(['web_search → 2 results', 'web_fetch → fetched https://example.com/a', 'bash_code_execution → exit 0, output: ran: ls -la /tmp', 'code_execution → exit 0, output encrypted', 'text_editor_code_execution → file created']);
      fs.mkdirSync(path.join(REPO, 'test', 'artifacts'), { recursive: true });
      await page.setViewportSize({ width: 1280, height: 2600 });
      await page.locator('ol.messages').screenshot({ path: path.join(REPO, 'test', 'artifacts', 'viz-thinking.png') });
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
