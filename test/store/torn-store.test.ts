/**
 * Torn and damaged journals, byte by byte: a cut anywhere inside the last committed record is
 * refused with nothing changed, and recovered to the record before it only when the loss is
 * accepted, and said so; a changed byte anywhere is refused; garbage at the end is refused, or
 * recovered as a cut-off end, as stated below. Never a different state silently.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoScript, DEMO_TASK, ensureSampleNotes } from '../../src/demo/demo-task.ts';
import { demoTools } from '../../src/demo/demo-tools.ts';
import { scriptedModel } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { StoreCorruptError, StoreLostRecordError, StoreVersionError } from '../../src/store/errors.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';

async function crashedDemo(label: string): Promise<{ dir: string; journal: string }> {
  const dir = tempDir();
  ensureSampleNotes(dir);
  await expect(
    startRun({ store: new FileStore(path.join(dir, '.durable-agent')), model: scriptedModel(demoScript()), tools: demoTools(dir), task: DEMO_TASK, crashAfter: label }),
  ).rejects.toThrow(SimulatedCrash);
  return { dir, journal: path.join(dir, '.durable-agent', 'journal.jsonl') };
}

function copyRun(from: string): string {
  const to = tempDir();
  fs.cpSync(from, to, { recursive: true });
  return to;
}

async function resumeDemo(dir: string, events: RunEvent[], options: { acceptLostRecord?: boolean } = {}) {
  return resumeRun({
    store: new FileStore(path.join(dir, '.durable-agent')),
    model: scriptedModel(demoScript()),
    tools: demoTools(dir),
    observer: (e) => events.push(e),
    ...options,
  });
}

let offsetsTried = 0;

describe('a cut inside the last record, at every byte offset', () => {
  it.each(['after-save-a:3', 'after-save-b:2'])(
    'last record written at %s: every cut is refused with nothing changed; accepted, it resumes from the record before, and says so',
    async (label) => {
      const { dir, journal } = await crashedDemo(label);
      const original = fs.readFileSync(journal);
      const loaded = await new FileStore(path.dirname(journal)).load();
      const last = loaded.records.at(-1)!;
      const previous = loaded.records.at(-2)!;
      for (let cut = last.offset; cut < original.length; cut++) {
        const copy = copyRun(dir);
        const copiedJournal = path.join(copy, '.durable-agent', 'journal.jsonl');
        fs.writeFileSync(copiedJournal, original.subarray(0, cut));
        const auditBefore = fs.existsSync(path.join(copy, 'report-audit.log')) ? fs.readFileSync(path.join(copy, 'report-audit.log'), 'utf8') : null;
        const refusedEvents: RunEvent[] = [];
        const refused = await resumeDemo(copy, refusedEvents).catch((e: unknown) => e);
        expect(refused, `cut at ${cut}`).toBeInstanceOf(StoreLostRecordError);
        expect(refused).toMatchObject({ record: last.record.seq });
        expect(refusedEvents).toEqual([]);
        expect(fs.readFileSync(copiedJournal)).toEqual(original.subarray(0, cut));
        const auditAfter = fs.existsSync(path.join(copy, 'report-audit.log')) ? fs.readFileSync(path.join(copy, 'report-audit.log'), 'utf8') : null;
        expect(auditAfter).toBe(auditBefore);

        const events: RunEvent[] = [];
        const result = await resumeDemo(copy, events, { acceptLostRecord: true });
        const resumed = events.find((e) => e.type === 'resumed');
        expect(resumed, `cut at ${cut}`).toMatchObject({
          state: previous.record.state,
          tornTail: { offset: last.offset, bytes: cut - last.offset, lostCommittedRecord: last.record.seq },
        });
        expect(result.status).toBe('done');
        // Here never twice: write_report had not run (save-a), or its verify() finds the report written.
        const audit = fs.readFileSync(path.join(copy, 'report-audit.log'), 'utf8').trim().split('\n');
        expect(audit).toHaveLength(1);
        offsetsTried += 1;
        fs.rmSync(copy, { recursive: true, force: true });
      }
    },
    // Two real resumes (with their fsyncs) per byte of the last record: ~40 s on CI, over 60 s on a crowded machine.
    240_000,
  );

  it('last record written at after-effect-write:3, the turn’s last ledger entry (committed only with B, by B’s fsync): every cut is a cut-off end, recovered without asking; the call is settled by verify(), never run twice', async () => {
    const { dir, journal } = await crashedDemo('after-effect-write:3');
    const original = fs.readFileSync(journal);
    const loaded = await new FileStore(path.dirname(journal)).load();
    const last = loaded.records.at(-1)!;
    expect(last.record.event).toBe('TOOL_RESULT');
    for (let cut = last.offset; cut < original.length; cut++) {
      const copy = copyRun(dir);
      fs.writeFileSync(path.join(copy, '.durable-agent', 'journal.jsonl'), original.subarray(0, cut));
      const events: RunEvent[] = [];
      const result = await resumeDemo(copy, events);
      expect(events.find((e) => e.type === 'resumed'), `cut at ${cut}`).toMatchObject({
        state: loaded.records.at(-2)!.record.state,
        tornTail: cut === last.offset ? null : { offset: last.offset, bytes: cut - last.offset, lostCommittedRecord: null },
      });
      expect(events.find((e) => e.type === 'reconciled')).toMatchObject({ decision: 'verified-done' });
      expect(result.status).toBe('done');
      expect(fs.readFileSync(path.join(copy, 'report-audit.log'), 'utf8').trim().split('\n')).toHaveLength(1);
      offsetsTried += 1;
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  it('tried every offset', () => {
    console.log(`[torn writes] ${offsetsTried} cut offsets inside last records resumed`);
    expect(offsetsTried).toBeGreaterThan(500);
  });
});

describe('a changed byte is refused, wherever it is', () => {
  it('refuses a flip of any byte of the journal (a lost final newline reads as the last committed record cut short)', async () => {
    const { journal } = await crashedDemo('after-save-b:2');
    const original = fs.readFileSync(journal);
    const store = new FileStore(path.dirname(journal));
    const lastSeq = (await store.load()).records.at(-1)!.record.seq;
    let refused = 0;
    for (let at = 0; at < original.length; at++) {
      const damaged = Buffer.from(original);
      damaged[at] = damaged[at]! ^ 0x04;
      fs.writeFileSync(journal, damaged);
      const outcome = await store.load().then(
        (loaded) => loaded,
        (error: unknown) => error,
      );
      if (at === original.length - 1) expect(outcome).toMatchObject({ name: 'StoreLostRecordError', record: lastSeq });
      expect(outcome instanceof StoreCorruptError || outcome instanceof StoreVersionError, `flip at byte ${at}`).toBe(true);
      refused += 1;
    }
    expect(refused).toBe(original.length);
    console.log(`[damaged bytes] ${refused} single-byte flips refused`);
  });
});

describe('garbage appended after the last record', () => {
  it('is refused when it forms a whole line, and the message says it is the last line', async () => {
    const { journal } = await crashedDemo('after-save-b:1');
    fs.appendFileSync(journal, '{"seq":99}\n');
    const error = await new FileStore(path.dirname(journal)).load().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreCorruptError);
    expect(error).toMatchObject({ damage: 'last' });
    expect((error as Error).message).toContain('A crash leaves at most a cut-off last line, not a whole line that is not a valid record');
    expect((error as Error).message).not.toContain('before the last record');
  });

  it('says which: a changed byte in the last record, or in one before it', async () => {
    const { journal } = await crashedDemo('after-save-b:1');
    const original = fs.readFileSync(journal);
    const records = (await new FileStore(path.dirname(journal)).load()).records;
    for (const [which, damage, words] of [
      [records.length - 1, 'last', 'not a whole line that is not a valid record'],
      [1, 'inside', 'Damage before the last record is not what a crash leaves behind'],
    ] as const) {
      const damaged = Buffer.from(original);
      const at = records[which]!.offset + 20;
      damaged[at] = damaged[at]! ^ 0x04;
      fs.writeFileSync(journal, damaged);
      const error = await new FileStore(path.dirname(journal)).load().catch((e: unknown) => e);
      expect(error).toMatchObject({ damage, line: which + 3 });
      expect((error as Error).message).toContain(words);
    }
  });

  it('is recovered as a cut-off end (a write a crash interrupted) when it has no newline, and kept aside', async () => {
    const { dir, journal } = await crashedDemo('after-save-b:1');
    fs.appendFileSync(journal, 'zz-not-a-record');
    const events: RunEvent[] = [];
    const result = await resumeDemo(dir, events);
    expect(result.status).toBe('done');
    const resumed = events.find((e) => e.type === 'resumed');
    expect(resumed).toMatchObject({ state: 'closed', tornTail: { bytes: 15, lostCommittedRecord: null } });
    const kept = (resumed as Extract<RunEvent, { type: 'resumed' }>).tornTail!.keptAt!;
    expect(fs.readFileSync(kept, 'utf8')).toBe('zz-not-a-record');
  });
});
