/**
 * The console's view of a tree of runs: a parent whose reply called two sub-agents shows them
 * on its page (state, turn, tokens, a link to each), and each child's page names the run and the
 * call that started it, with a link back — for a parent that is a run by id and for one that is
 * its state folder's own run.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningConsole, startConsole } from '../../src/console/console-server.ts';
import { FileRuns, FileStore, startRun, subagentTool } from '../../src/index.ts';
import { editorAgent, writerAgent } from '../helpers/subagent-agents.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const TOKEN = 'bo:console-tree-token-0123456789';
const editor = (dir: string) => editorAgent([subagentTool(writerAgent(dir))]);

let dir: string;
let root: string;
let server: RunningConsole;

async function get(pathname: string): Promise<any> {
  const response = await fetch(`${server.origin}${pathname}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status, pathname).toBe(200);
  return response.json();
}

async function detailOf(runId: string): Promise<any> {
  const { rows } = await get('/api/runs?limit=1000');
  const row = rows.find((candidate: { runId: string }) => candidate.runId === runId);
  expect(row, runId).toBeDefined();
  return get(`/api/runs/${encodeURIComponent(row.key)}`);
}

beforeAll(async () => {
  dir = tempDir('da-console-tree-');
  root = path.join(dir, '.durable-agent');
  // One parent as a run by id, one as the state folder's own run.
  const byId = await startRun({ agent: editor(dir), store: new FileRuns(root).store('editor-1'), task: 'Write two notes.', runId: 'editor-1' });
  const own = await startRun({ agent: editor(dir), store: new FileStore(root), task: 'Write two notes.', runId: 'editor-own' });
  expect([byId.status, own.status]).toEqual(['done', 'done']);
  server = await startConsole({ roots: [root], port: 0, token: TOKEN, user: 'nobody' });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('the console shows the tree of sub-agent runs', () => {
  for (const parent of ['editor-1', 'editor-own']) {
    it(`the page of ${parent} lists its two children, and each child's page links back to it`, async () => {
      const detail = await detailOf(parent);
      expect(detail.lineage.calledBy).toBeNull();
      const children = detail.lineage.children;
      expect(children.map((child: { runId: string; toolUseId: string }) => [child.runId, child.toolUseId])).toEqual([
        [`${parent}.toolu_a`, 'toolu_a'],
        [`${parent}.toolu_b`, 'toolu_b'],
      ]);
      for (const child of children) {
        expect(child).toMatchObject({ state: 'done', children: [] });
        expect(child.tokens).toBeGreaterThan(0);
        expect(child.key).toEqual(expect.any(String));
        const page = await get(`/api/runs/${encodeURIComponent(child.key)}`);
        expect(page.summary.runId).toBe(child.runId);
        expect([page.summary.turn, page.summary.tokens]).toEqual([child.turn, child.tokens]);
        expect(page.summary.finalText).toMatch(/^wrote "note [AB]"$/);
        expect(page.lineage.calledBy).toMatchObject({ runId: parent, toolUseId: child.toolUseId });
        const back = await get(`/api/runs/${encodeURIComponent(page.lineage.calledBy.key)}`);
        expect(back.summary.runId).toBe(parent);
      }
    });
  }
});
