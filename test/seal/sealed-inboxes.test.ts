/**
 * What other processes write for a sealed run waits in its inbox sealed: a decision's reason,
 * note, edited input and answer, a signal's data, a cancel's reason. Written with the key, none
 * of it is in the state folder as text; the run's writer opens it and records it (sealed in the
 * journal). Without the key an entry with content is refused, naming the master key, nothing
 * written; one without content (an approval, a cancel without a reason) is written all the same.
 * A sealed value moved to another call is not taken.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decide, pendingDecisions } from '../../src/awaits/decide.ts';
import { sendSignal } from '../../src/awaits/send-signal.ts';
import { waitTool } from '../../src/awaits/wait-tool.ts';
import { scriptedModel, endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { cancelRun } from '../../src/runtime/cancel-run.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { KeyRing } from '../../src/seal/keys.ts';
import { KeyNotGivenError } from '../../src/seal/seal-errors.ts';
import { isSealedValue } from '../../src/seal/value-codec.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { folderText } from '../helpers/folder-text.ts';

const ring = () => KeyRing.of([{ id: 'k1', key: randomBytes(32) }]);
const NOTE = 'Ana Ortega agreed on the phone';
const EDITED = 'ana.private@example.org';
const REASON = 'the board must not read this draft';
const DATA = 'release notes for Project Lighthouse';

const script = () => [toolUseReply([{ id: 'toolu_a', name: 'lookup', input: { q: 'a' } }, { id: 'toolu_b', name: 'send_email', input: { to: 'x@example.com' } }]), endTurnReply('mail sent')];


/** A sealed run stopped for a person's approval of toolu_b. */
async function waitingRun(keys: KeyRing) {
  const dir = path.join(tempDir('da-sealed-inbox-'), '.durable-agent');
  const { tools, counter } = countingTools();
  const parts = { tools, requireApproval: ['send_email'], wait: false };
  expect((await startRun({ ...parts, store: new FileStore(dir), keys, model: scriptedModel(script()), task: 'mail Ana' })).status).toBe('waiting');
  const resume = () => resumeRun({ ...parts, store: new FileStore(dir), keys, model: scriptedModel(script()) });
  return { dir, tools, counter, resume };
}

describe('a decision for a sealed run', () => {
  it('is sealed in the inbox when written with the key, and refused without it; the run records it opened', async () => {
    const keys = ring();
    const { dir, tools, resume } = await waitingRun(keys);
    const refused = await decide(new FileStore(dir), { tool_use_id: 'toolu_b', verdict: 'denied', reason: REASON }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(KeyNotGivenError);
    expect(refused).toMatchObject({ keyId: 'k1', role: 'master key' });
    expect(fs.existsSync(path.join(dir, 'decisions', 'toolu_b.json'))).toBe(false);

    await decide(new FileStore(dir, { keys }), { tool_use_id: 'toolu_b', verdict: 'approved', by: 'bo', note: NOTE, input: { to: EDITED } }, { tools });
    const file = JSON.parse(fs.readFileSync(path.join(dir, 'decisions', 'toolu_b.json'), 'utf8'));
    expect(file.sealed).toMatch(/^rk-/);
    expect(file.decision).toMatchObject({ tool_use_id: 'toolu_b', verdict: 'approved', by: 'bo' });
    for (const secret of [NOTE, EDITED]) expect(folderText(dir)).not.toContain(secret);

    // Read without the key, it is given (by whom, which verdict), its content sealed strings.
    const [unkeyed] = await pendingDecisions(new FileStore(dir));
    expect(unkeyed!.given).toMatchObject({ verdict: 'approved', by: 'bo' });
    expect(isSealedValue(unkeyed!.given!.note)).toBe(true);
    // Read with it, it opens.
    const [keyed] = await pendingDecisions(new FileStore(dir, { keys }));
    expect(keyed!.given).toMatchObject({ note: NOTE, input: { to: EDITED } });

    expect((await resume()).status).toBe('done');
    for (const secret of [NOTE, EDITED]) expect(folderText(dir)).not.toContain(secret);
    const view = foldJournal(dir, await new FileStore(dir, { keys }).load());
    expect(view.context.decisions).toEqual([expect.objectContaining({ tool_use_id: 'toolu_b', note: NOTE, input: { to: EDITED } })]);
  });

  it('without content (an approval alone) is written without the key: nothing to seal', async () => {
    const keys = ring();
    const { dir, counter, resume } = await waitingRun(keys);
    await decide(new FileStore(dir), { tool_use_id: 'toolu_b', verdict: 'approved', by: 'ops' });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'decisions', 'toolu_b.json'), 'utf8')).sealed).toBeUndefined();
    expect((await resume()).status).toBe('done');
    expect(counter.of('toolu_b')).toBe(1);
  });

  it('moved to another call (its sealed note in another decision) is not taken', async () => {
    const keys = ring();
    const { dir } = await waitingRun(keys);
    await decide(new FileStore(dir, { keys }), { tool_use_id: 'toolu_b', verdict: 'approved', note: NOTE });
    const file = path.join(dir, 'decisions', 'toolu_b.json');
    const envelope = JSON.parse(fs.readFileSync(file, 'utf8'));
    const moved = { ...envelope, decision: { ...envelope.decision, tool_use_id: 'toolu_c' } };
    fs.writeFileSync(path.join(dir, 'decisions', 'toolu_c.json'), JSON.stringify(moved));
    const inbox = new FileStore(dir, { keys });
    await inbox.load();
    expect(inbox.decisions.unreadable('toolu_c')).toMatchObject({ problem: expect.stringContaining('sealed content does not open') });
    expect((await inbox.decisions.read()).map((decision) => decision.tool_use_id)).toEqual(['toolu_b']);
  });
});

describe("a signal's data for a sealed run", () => {
  it('is sealed in the inbox when sent with the key, refused without it, and the wait gets it opened', async () => {
    const keys = ring();
    const dir = path.join(tempDir('da-sealed-signal-'), '.durable-agent');
    const waits = scriptedModel([toolUseReply([{ id: 'toolu_w1', name: 'wait', input: { event: 'deploy', timeoutSeconds: 3600 } }]), endTurnReply('deployed')]);
    expect((await startRun({ store: new FileStore(dir), keys, model: waits, tools: [waitTool()], wait: false, task: 'wait for the deploy' })).status).toBe('waiting');

    const refused = await sendSignal(new FileStore(dir), { name: 'deploy', data: { notes: DATA } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(KeyNotGivenError);
    expect(fs.existsSync(path.join(dir, 'signals', 'deploy.json'))).toBe(false);

    const sent = await sendSignal(new FileStore(dir, { keys }), { name: 'deploy', data: { notes: DATA }, by: 'ci' });
    expect(sent.delivery).toEqual({ outcome: 'delivered' });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'signals', 'deploy.json'), 'utf8')).sealed).toMatch(/^rk-/);
    expect(folderText(dir)).not.toContain(DATA);

    const resumed = await resumeRun({ store: new FileStore(dir), keys, model: scriptedModel([toolUseReply([{ id: 'toolu_w1', name: 'wait', input: { event: 'deploy', timeoutSeconds: 3600 } }]), endTurnReply('deployed')]), tools: [waitTool()] });
    expect(resumed.status).toBe('done');
    expect(folderText(dir)).not.toContain(DATA);
    const view = foldJournal(dir, await new FileStore(dir, { keys }).load());
    expect(view.context.decisions[0]!.text).toContain(DATA);
  });
});

describe("a cancel's reason for a sealed run", () => {
  it('is refused without the key, nothing written; with it the run ends cancelled, the reason sealed', async () => {
    const keys = ring();
    const { dir } = await waitingRun(keys);
    const refused = await cancelRun({ store: new FileStore(dir), by: 'ops', reason: REASON }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(KeyNotGivenError);
    expect(fs.existsSync(path.join(dir, 'control', 'cancel.json'))).toBe(false);
    expect(foldJournal(dir, await new FileStore(dir).load()).state).toBe('awaitingDecision');

    const cancelled = await cancelRun({ store: new FileStore(dir, { keys }), by: 'ops', reason: REASON });
    expect(cancelled.outcome).toBe('cancelled');
    expect(folderText(dir)).not.toContain(REASON);
    const view = foldJournal(dir, await new FileStore(dir, { keys }).load());
    expect(view.context.cancellation).toMatchObject({ by: 'ops', reason: REASON });
  });

  it('a cancel without a reason is written without the key (nothing to seal); its cancelled record needs the key, as any record', async () => {
    const keys = ring();
    const { dir } = await waitingRun(keys);
    // No process drives the run, so the cancel would write its last record itself: that is a journal write.
    await expect(cancelRun({ store: new FileStore(dir), by: 'ops' })).rejects.toBeInstanceOf(KeyNotGivenError);
    const request = JSON.parse(fs.readFileSync(path.join(dir, 'control', 'cancel.json'), 'utf8'));
    expect(request).toMatchObject({ request: { kind: 'cancel', by: 'ops', reason: null } });
    expect(request.sealed).toBeUndefined();
    expect((await cancelRun({ store: new FileStore(dir, { keys }), by: 'ops' })).outcome).toBe('cancelled');
  });
});
