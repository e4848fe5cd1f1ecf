/**
 * The file store's inbox of decisions, on real files: a decision is there whole or not at all,
 * never twice, and a tool_use_id never reaches the file system unless it is a plain name.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BadCallIdError, DecisionExistsError, FileDecisionInbox, InboxFileError } from '../../src/store/inbox/file-decision-inbox.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const approved = { tool_use_id: 'toolu_03', verdict: 'approved', by: 'ana', at: 1_700_000_000_000, note: 'looks fine' } as const;

function inboxIn(dir = tempDir()) {
  return { stateDir: dir, inbox: new FileDecisionInbox(dir) };
}

describe('the decision inbox', () => {
  it('writes a decision whole to decisions/<tool_use_id>.json, reads it back, leaves no temporary file', async () => {
    const { stateDir, inbox } = inboxIn();
    await inbox.put(approved);
    expect(fs.readdirSync(path.join(stateDir, 'decisions'))).toEqual(['toolu_03.json']);
    expect(await inbox.get('toolu_03')).toEqual(approved);
    expect(await inbox.list()).toEqual([approved]);
    expect(await inbox.get('toolu_04')).toBeNull();
  });

  it('refuses a second decision for the same call and keeps the first', async () => {
    const { inbox } = inboxIn();
    await inbox.put(approved);
    const second = inbox.put({ tool_use_id: 'toolu_03', verdict: 'denied', by: 'bo', at: 2, reason: 'no' });
    await expect(second).rejects.toBeInstanceOf(DecisionExistsError);
    expect(await inbox.get('toolu_03')).toEqual(approved);
    expect(fs.readdirSync(inbox.dir)).toEqual(['toolu_03.json']);
  });

  it('of twenty writers of the same call, exactly one wins', async () => {
    const { inbox } = inboxIn();
    const writes = Array.from({ length: 20 }, (_, i) => inbox.put({ tool_use_id: 'toolu_x', verdict: 'denied', by: `p${i}`, at: i, reason: `r${i}` }));
    const settled = await Promise.allSettled(writes);
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    const winner = await inbox.get('toolu_x');
    expect(winner?.reason).toBe(`r${winner?.at}`);
    expect(fs.readdirSync(inbox.dir)).toEqual(['toolu_x.json']);
  });

  it.each(['../escape', 'a/b', 'a\\b', 'toolu.01', '.', '..', '', 'toolu_01\0', 'x'.repeat(129), 'tool u'])(
    'refuses the call id %j before making any path',
    async (id) => {
      const { stateDir, inbox } = inboxIn();
      await expect(inbox.put({ ...approved, tool_use_id: id })).rejects.toBeInstanceOf(BadCallIdError);
      await expect(inbox.get(id)).rejects.toBeInstanceOf(BadCallIdError);
      await expect(inbox.remove(id)).rejects.toBeInstanceOf(BadCallIdError);
      expect(fs.readdirSync(stateDir)).toEqual([]);
      expect(fs.existsSync(path.join(path.dirname(stateDir), 'escape.json'))).toBe(false);
    },
  );

  it('a write that fails half-way (a full disk) leaves no decision and no temporary file', async () => {
    const dir = tempDir();
    const inbox = new FileDecisionInbox(dir, { failWrite: () => true });
    await expect(inbox.put(approved)).rejects.toMatchObject({ name: 'StoreAccessError', code: 'ENOSPC' });
    expect(fs.readdirSync(path.join(dir, 'decisions'))).toEqual([]);
    await new FileDecisionInbox(dir).put(approved);
    expect(await inbox.get('toolu_03')).toEqual(approved);
  });

  it('takes no temporary file for a decision, and sweeps those whose writer is gone', async () => {
    const { inbox } = inboxIn();
    fs.mkdirSync(inbox.dir, { recursive: true });
    const dead = path.join(inbox.dir, 'toolu_03.json.tmp-999999999-abcd');
    const live = path.join(inbox.dir, `toolu_03.json.tmp-${process.pid}-abcd`);
    fs.writeFileSync(dead, '{"format":"durable-agent/decision","ver');
    fs.writeFileSync(live, '{"format":"durable-agent/decision","ver');
    expect(await inbox.list()).toEqual([]);
    expect(await inbox.get('toolu_03')).toBeNull();
    await inbox.put(approved);
    expect(fs.readdirSync(inbox.dir).sort()).toEqual(['toolu_03.json', path.basename(live)]);
  });

  it('refuses a file that is not a decision it wrote, naming the file and what to do', async () => {
    const { inbox } = inboxIn();
    fs.mkdirSync(inbox.dir, { recursive: true });
    const cases: Array<[string, string]> = [
      ['{"format":"durable-agent/decision","vers', 'not JSON'],
      ['{"format":"other","version":1,"decision":{}}', 'format'],
      ['{"format":"durable-agent/decision","version":2,"decision":{}}', 'version 2'],
      [JSON.stringify({ format: 'durable-agent/decision', version: 1, decision: { ...approved, tool_use_id: 'toolu_09' } }), 'about toolu_09'],
      [JSON.stringify({ format: 'durable-agent/decision', version: 1, decision: { ...approved, verdict: 'maybe' } }), 'verdict'],
      [JSON.stringify({ format: 'durable-agent/decision', version: 1, decision: { ...approved, verdict: 'denied' } }), 'without a reason'],
    ];
    for (const [text, problem] of cases) {
      fs.writeFileSync(path.join(inbox.dir, 'toolu_03.json'), text);
      const error = await inbox.get('toolu_03').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InboxFileError);
      expect((error as Error).message).toContain(problem);
      expect((error as Error).message).toContain('move it out of the directory');
    }
  });

  it('removes a decision durably; removing one that is not there is not an error', async () => {
    const { inbox } = inboxIn();
    await inbox.remove('toolu_03');
    await inbox.put(approved);
    await inbox.remove('toolu_03');
    expect(await inbox.list()).toEqual([]);
    await inbox.put({ ...approved, verdict: 'denied', reason: 'again?' });
    expect((await inbox.get('toolu_03'))?.verdict).toBe('denied');
  });

  it('offers the store interface: write says written or exists, read leaves a damaged file out, settle removes', async () => {
    const { inbox } = inboxIn();
    expect(await inbox.write(approved)).toBe('written');
    expect(await inbox.write({ ...approved, verdict: 'denied', reason: 'late' })).toBe('exists');
    fs.writeFileSync(path.join(inbox.dir, 'toolu_04.json'), '{"half');
    expect(await inbox.read()).toEqual([approved]);
    await expect(inbox.list()).rejects.toBeInstanceOf(InboxFileError);
    await inbox.settle('toolu_03');
    expect(await inbox.read()).toEqual([]);
  });

  it('lists the decisions oldest first', async () => {
    const { inbox } = inboxIn();
    await inbox.put({ ...approved, tool_use_id: 'toolu_b', at: 1 });
    await inbox.put({ ...approved, tool_use_id: 'toolu_a', at: 2 });
    expect((await inbox.list()).map((d) => d.tool_use_id)).toEqual(['toolu_b', 'toolu_a']);
  });
});

describe('DURABLE_AGENT_FAIL_WRITE=decision-write on the command line', () => {
  it('approve fails (exit 4, the path and the fix) and leaves no decision; the next approve writes it', async () => {
    const { runCliAsync } = await import('../helpers/cli.ts');
    const dir = tempDir();
    expect((await runCliAsync(['demo', '--require-approval', 'write_report', '--no-wait'], { cwd: dir })).code).toBe(7);
    const failed = await runCliAsync(['approve', 'toolu_03'], { cwd: dir, env: { DURABLE_AGENT_FAIL_WRITE: 'decision-write:1' } });
    expect(failed.code).toBe(4);
    expect(failed.stderr).toMatch(/write the decision .*toolu_03\.json.*ENOSPC.*free disk space/);
    expect(fs.readdirSync(path.join(dir, '.durable-agent', 'decisions'))).toEqual([]);
    expect((await runCliAsync(['approve', 'toolu_03'], { cwd: dir })).code).toBe(0);
  });
});
