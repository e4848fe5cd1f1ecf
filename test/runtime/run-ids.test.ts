/**
 * A task done once: a run started under an id that exists is attached to, never started again,
 * at every crash point of its path, the one after the final record included; a folder holds any
 * number of runs by id, lists them, and still opens a folder written before run ids.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunIdError, RunIdMismatchError, RunIdTakenError, RunLockedError, StoreHoldsOtherRunError } from '../../src/errors.ts';
import { FileRuns, FileStore, openRun, resumeRun, startRun } from '../../src/index.ts';
import { listRuns } from '../../src/fleet/list-runs.ts';
import { runIdWasGiven } from '../../src/store/run-id.ts';
import { endTurnReply, scriptedModel, SimulatedCrash, toolUseReply } from '../../src/testing.ts';
import { demoTools } from '../../src/demo/demo-tools.ts';
import { demoScript, DEMO_TASK } from '../../src/demo/demo-task.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures');

/** One invoice, sent by a tool that cannot be checked afterwards: sending it twice is the bug. */
const invoiceScript = () => [toolUseReply([{ id: 'toolu_send', name: 'send_email', input: { to: 'billing@example.com' } }]), endTurnReply('invoice sent')];
/** One charge, by a tool whose verify() checks its idempotency key: done exactly once, whatever the kill. */
const chargeScript = () => [toolUseReply([{ id: 'toolu_charge', name: 'charge_card', input: { amount: 42 } }]), endTurnReply('charged')];

/** The path of one invoice run, every point its process may be killed at, in order. */
const INVOICE_POINTS = ['after-save-start:1', 'after-model-reply:1', 'after-save-a:1', 'after-tool-return:1', 'after-effect-write:1', 'after-save-b:1', 'after-model-reply:2', 'after-save-done:1'];

describe('start under an id that exists: attach, never start again', () => {
  it('three starts in a row with the same id run the side effect once and answer with the stored result', async () => {
    const runs = new FileRuns(tempDir());
    const { tools, counter } = countingTools();
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await startRun({ store: runs.store('invoice-42'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 42' }));
    expect(counter.of('toolu_send')).toBe(1);
    expect(results.map((r) => [r.runId, r.status, r.text])).toEqual(Array(3).fill(['invoice-42', 'done', 'invoice sent']));
  });

  it.each(INVOICE_POINTS)('killed at %s, then started twice more with the same id: the checkable charge is made exactly once', async (point) => {
    const runs = new FileRuns(tempDir());
    const { tools, counter, charged } = countingTools();
    const start = (crashAfter?: string) => startRun({ store: runs.store('charge-42'), model: scriptedModel(chargeScript()), tools, task: 'Charge 42', ...(crashAfter ? { crashAfter } : {}) });
    await expect(start(point)).rejects.toThrow(SimulatedCrash);
    const afterKill = await start();
    const again = await start();
    expect(counter.of('toolu_charge')).toBe(1);
    expect(charged.size).toBe(1);
    expect(afterKill).toMatchObject({ runId: 'charge-42', status: 'done', text: 'charged' });
    expect(again).toEqual(afterKill);
  });

  it.each(INVOICE_POINTS)('killed at %s, then started twice more with the same id: an invoice that cannot be checked is never sent twice', async (point) => {
    const runs = new FileRuns(tempDir());
    const { tools, counter } = countingTools();
    const start = (crashAfter?: string) => startRun({ store: runs.store('invoice-42'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 42', ...(crashAfter ? { crashAfter } : {}) });
    await expect(start(point)).rejects.toThrow(SimulatedCrash);
    const afterKill = await start();
    const again = await start();
    // Killed after A announced the call and before its outcome was recorded, the state is
    // unknown (send_email has no verify()): the model is told so, and the tool is not run again.
    expect(counter.of('toolu_send')).toBe(point === 'after-save-a:1' ? 0 : 1);
    expect(afterKill.status).toBe('done');
    expect(again).toEqual(afterKill);
  });

  it('refuses an id whose run was started with another task or model, naming what differs, and writes nothing', async () => {
    const runs = new FileRuns(tempDir());
    const { tools, counter } = countingTools();
    await startRun({ store: runs.store('invoice-42'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 42' });
    const journal = runs.store('invoice-42').journalPath;
    const before = fs.readFileSync(journal);
    const other = startRun({ store: runs.store('invoice-42'), model: scriptedModel(invoiceScript(), { name: 'another-model' }), tools, task: 'Send invoice 43' });
    await expect(other).rejects.toThrow(RunIdTakenError);
    await expect(other).rejects.toThrow(/task: stored "Send invoice 42", given "Send invoice 43"; model: stored scripted, given another-model/);
    expect(fs.readFileSync(journal)).toEqual(before);
    expect(counter.of('toolu_send')).toBe(1);
  });

  it('starts a second run under the same id only when told (ifExists: "new"), keeping the first in the archive', async () => {
    const runs = new FileRuns(tempDir());
    const { tools, counter } = countingTools();
    await startRun({ store: runs.store('invoice-42'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 42' });
    await startRun({ store: runs.store('invoice-42'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 42', ifExists: 'new' });
    expect(counter.of('toolu_send')).toBe(2);
    const listed = await listRuns(runs);
    expect(listed.map((run) => [run.runId, run.state, run.archived]).sort()).toEqual([
      ['invoice-42', 'done', false],
      ['invoice-42', 'done', true],
    ]);
  });

  it('takes the id from options.runId on a folder of one run too, and refuses an id the store was opened under another of', async () => {
    const store = new FileStore(path.join(tempDir(), '.durable-agent'));
    const { tools, counter } = countingTools();
    const first = await startRun({ store, runId: 'order-7', model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 7' });
    const second = await startRun({ store, runId: 'order-7', model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 7' });
    expect(second).toEqual(first);
    expect(counter.of('toolu_send')).toBe(1);
    const runs = new FileRuns(tempDir());
    await expect(startRun({ store: runs.store('a'), runId: 'b', model: scriptedModel(invoiceScript()), tools, task: 't' })).rejects.toThrow(RunIdMismatchError);
  });

  it('never clears a run of another given id from a folder of one run: starts of order-42 among others send its invoice once', async () => {
    const state = path.join(tempDir(), '.durable-agent');
    const { tools, counter } = countingTools();
    const start = (id: string) => startRun({ store: new FileStore(state), runId: id, model: scriptedModel(invoiceScript()), tools, task: `Send invoice ${id}` });
    const first = await start('order-42');
    const refused = await start('order-43').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StoreHoldsOtherRunError);
    expect(refused).toMatchObject({ name: 'StoreHoldsOtherRunError', kind: 'refused', runId: 'order-43', storedRunId: 'order-42', location: state });
    expect((refused as Error).message).toMatch(/FileRuns/);
    expect((refused as Error).message).toMatch(/ifExists: "new"/);
    expect(await start('order-42')).toEqual(first);
    await expect(start('order-44')).rejects.toThrow(StoreHoldsOtherRunError);
    expect(await start('order-42')).toEqual(first);
    expect(counter.of('toolu_send')).toBe(1);
    expect(fs.existsSync(path.join(state, 'archive'))).toBe(false);
    // Starting over on purpose is still there: the run of order-42 is archived, never deleted.
    const over = await startRun({ store: new FileStore(state), runId: 'order-43', ifExists: 'new', model: scriptedModel(invoiceScript()), tools, task: 'Send invoice order-43' });
    expect(over).toMatchObject({ runId: 'order-43', status: 'done' });
    expect((await listRuns(new FileRuns(state))).map((run) => [run.runId, run.archived]).sort()).toEqual([
      ['order-42', true],
      ['order-43', false],
    ]);
  });

  it('refuses to clear an unfinished run of another given id too, naming the way out', async () => {
    const state = path.join(tempDir(), '.durable-agent');
    const { tools } = countingTools();
    const start = (id: string, crashAfter?: string) =>
      startRun({ store: new FileStore(state), runId: id, model: scriptedModel(invoiceScript()), tools, task: `Send invoice ${id}`, ...(crashAfter ? { crashAfter } : {}) });
    await expect(start('order-42', 'after-save-a:1')).rejects.toThrow(SimulatedCrash);
    await expect(start('order-43')).rejects.toThrow(StoreHoldsOtherRunError);
    expect(fs.existsSync(path.join(state, 'archive'))).toBe(false);
  });

  it('still replaces a finished run started without an id (a random one) when a start gives one', async () => {
    const state = path.join(tempDir(), '.durable-agent');
    const { tools, counter } = countingTools();
    const random = await startRun({ store: new FileStore(state), model: scriptedModel(invoiceScript()), tools, task: 'Send an invoice' });
    const named = await startRun({ store: new FileStore(state), runId: 'order-42', model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 42' });
    expect(named).toMatchObject({ runId: 'order-42', status: 'done' });
    expect(counter.of('toolu_send')).toBe(2);
    expect((await listRuns(new FileRuns(state))).map((run) => [run.runId, run.archived]).sort()).toEqual([
      [random.runId, true],
      ['order-42', false],
    ]);
  });

  it('tells a given id from a random one: by the header, else by its shape (journals written before the header said)', () => {
    const uuid = 'ca547d96-8e77-4658-99a1-f8fcf4055539';
    expect(runIdWasGiven({ runId: uuid })).toBe(false);
    expect(runIdWasGiven({ runId: uuid, runIdGiven: true })).toBe(true);
    expect(runIdWasGiven({ runId: 'order-42' })).toBe(true);
  });

  it('refuses an id that is not a safe name before anything is written', async () => {
    const root = tempDir();
    const runs = new FileRuns(root);
    const { tools } = countingTools();
    for (const id of ['../escape', 'a/b', '..', '.hidden', 'with space', 'tab\there', 'x'.repeat(129), '', 'nul\u0000']) {
      expect(() => runs.store(id), JSON.stringify(id)).toThrow(RunIdError);
      await expect(startRun({ store: new FileStore(path.join(root, 'single')), runId: id, model: scriptedModel(invoiceScript()), tools, task: 't' })).rejects.toThrow(RunIdError);
    }
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('lets one process drive a run while another attaching to the same id is refused', async () => {
    const runs = new FileRuns(tempDir());
    const { tools } = countingTools();
    const slow = scriptedModel(invoiceScript(), { paceMs: 300 });
    const driving = startRun({ store: runs.store('invoice-42'), model: slow, tools, task: 'Send invoice 42' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(startRun({ store: runs.store('invoice-42'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 42' })).rejects.toThrow(RunLockedError);
    expect((await driving).status).toBe('done');
  });
});

describe('many runs in one folder', () => {
  it('lists every run with its state, task, turn and lineage; a run opened by id reads only its own folder', async () => {
    const root = tempDir();
    const runs = new FileRuns(root);
    const { tools } = countingTools();
    await startRun({ store: runs.store('done-1'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 1' });
    await startRun({ store: runs.store('waiting-2'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 2', requireApproval: ['send_email'], wait: false });
    await expect(startRun({ store: runs.store('killed-3'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 3', crashAfter: 'after-save-a:1' })).rejects.toThrow(SimulatedCrash);
    const listed = await listRuns(runs);
    expect(listed.map((run) => [run.runId, run.state, run.task, run.archived]).sort()).toEqual([
      ['done-1', 'done', 'Send invoice 1', false],
      ['killed-3', 'pendingTool', 'Send invoice 3', false],
      ['waiting-2', 'awaitingDecision', 'Send invoice 2', false],
    ]);
    expect((await listRuns(runs, { states: ['done'] })).map((run) => run.runId)).toEqual(['done-1']);
    expect(await openRun({ store: runs.store('waiting-2') }).status()).toMatchObject({ state: 'awaitingDecision' });
  });

  it('lists a journal it cannot read with its problem instead of failing the list', async () => {
    const root = tempDir();
    const runs = new FileRuns(root);
    const { tools } = countingTools();
    await startRun({ store: runs.store('fine'), model: scriptedModel(invoiceScript()), tools, task: 'Send invoice 1' });
    fs.mkdirSync(path.join(runs.root, 'runs', 'broken'), { recursive: true });
    fs.writeFileSync(path.join(runs.root, 'runs', 'broken', 'journal.jsonl'), 'not a journal\n');
    const listed = await listRuns(runs);
    expect(listed.find((run) => run.runId === 'fine')).toMatchObject({ state: 'done', problem: null });
    expect(listed.find((run) => run.runId === 'broken')).toMatchObject({ state: null, problem: expect.stringContaining('journal') });
  });

  it('still opens, resumes and lists a run folder written before run ids (a demo killed mid-run by the previous release)', async () => {
    const dir = tempDir();
    // Kept under another name (no state folder is committed), put where the previous release wrote it.
    fs.cpSync(path.join(FIXTURES, 'one-run-folder'), dir, { recursive: true });
    const state = path.join(dir, '.durable-agent');
    fs.renameSync(path.join(dir, 'state-by-previous-release'), state);
    fs.chmodSync(state, 0o700);
    const before = await listRuns(new FileRuns(state));
    expect(before).toHaveLength(1);
    expect(before[0]).toMatchObject({ runId: 'ca547d96-8e77-4658-99a1-f8fcf4055539', task: DEMO_TASK, archived: false });
    expect(before[0]!.state).not.toBe('done');
    const resumed = await resumeRun({ store: new FileStore(state), model: scriptedModel(demoScript(), { name: 'scripted-demo' }), tools: demoTools(dir), command: 'demo' });
    expect(resumed).toMatchObject({ status: 'done', runId: 'ca547d96-8e77-4658-99a1-f8fcf4055539' });
    expect(fs.readFileSync(path.join(dir, 'report.txt'), 'utf8')).toMatch(/^Sales report/);
    expect((await listRuns(new FileRuns(state)))[0]).toMatchObject({ state: 'done' });
  });
});
