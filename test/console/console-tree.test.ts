/**
 * The console's view of a tree of runs: a parent whose reply called two sub-agents shows them
 * on its page (state, turn, tokens, a link to each), and each child's page names the run and the
 * call that started it, with a link back — for a parent that is a run by id and for one that is
 * its state folder's own run. The calls its children wait on show on the parent's page, and a
 * decision given there goes to the child that waits.
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

// biome-ignore lint/suspicious/noExplicitAny: the console's JSON answers, read field by field as the page does
async function get(pathname: string): Promise<any> {
  const response = await fetch(`${server.origin}${pathname}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status, pathname).toBe(200);
  return response.json();
}

// biome-ignore lint/suspicious/noExplicitAny: the console's JSON answers, read field by field as the page does
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

  it("lists on the parent's page the calls its children wait on; a decision given there goes to that child", async () => {
    const waiting = tempDir('da-console-tree-wait-');
    const runs = new FileRuns(path.join(waiting, '.durable-agent'));
    const started = startRun({ agent: editorAgent([subagentTool(writerAgent(waiting, { approval: true }))]), store: runs.store('editor-w'), task: 'Write two notes.', runId: 'editor-w' });
    const own = await startConsole({ roots: [path.join(waiting, '.durable-agent')], port: 0, token: TOKEN, user: 'nobody' });
    try {
      const headers = { authorization: `Bearer ${TOKEN}` };
      type Detail = { pending: Array<{ tool_use_id: string; name: string; run?: string; waitsFor: string }> };
      let key = '';
      let detail: Detail = { pending: [] };
      for (const deadline = Date.now() + 20_000; detail.pending.length < 2; ) {
        if (Date.now() > deadline) throw new Error(`the children did not come to wait: ${JSON.stringify(detail.pending)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        const { rows } = (await (await fetch(`${own.origin}/api/runs`, { headers })).json()) as { rows: Array<{ runId: string; key: string }> };
        const row = rows.find((candidate) => candidate.runId === 'editor-w');
        if (!row) continue;
        key = encodeURIComponent(row.key);
        detail = (await (await fetch(`${own.origin}/api/runs/${key}`, { headers })).json()) as Detail;
      }
      expect(detail.pending.map((call) => [call.run, call.name, call.waitsFor])).toEqual([
        ['editor-w.toolu_a', 'write_note', 'approval'],
        ['editor-w.toolu_b', 'write_note', 'approval'],
      ]);
      const post = (body: Record<string, unknown>) =>
        fetch(`${own.origin}/api/runs/${key}/decisions`, { method: 'POST', headers: { ...headers, origin: own.origin, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect((await post({ toolUseId: detail.pending[0]!.tool_use_id, verdict: 'approved' })).status).toBe(200);
      expect((await post({ toolUseId: detail.pending[1]!.tool_use_id, verdict: 'denied', reason: 'one is enough' })).status).toBe(200);
      expect((await started).status).toBe('done');
      const decisionsOf = async (id: string) => (await runs.store(id).load()).records.flatMap((stored) => stored.record.decisions?.add ?? []).map((d) => [d.tool_use_id, d.verdict, d.by]);
      expect(await decisionsOf('editor-w.toolu_a')).toEqual([[detail.pending[0]!.tool_use_id, 'approved', 'bo']]);
      expect(await decisionsOf('editor-w.toolu_b')).toEqual([[detail.pending[1]!.tool_use_id, 'denied', 'bo']]);
      expect(await decisionsOf('editor-w')).toEqual([]);
    } finally {
      await own.close();
    }
  });
});
