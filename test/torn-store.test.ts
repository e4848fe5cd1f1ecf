/**
 * Torn and damaged journals, byte by byte: a cut anywhere inside the last record is recovered
 * to the record before it and said so; a changed byte anywhere is refused; garbage at the end
 * is refused, or recovered as a cut-off end, as stated below. Never a different state silently.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoScript, DEMO_TASK, ensureSampleNotes } from '../src/demo/demo-task.ts';
import { demoTools } from '../src/demo/demo-tools.ts';
import { scriptedModel } from '../src/model/scripted-model.ts';
import { SimulatedCrash } from '../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../src/runtime/run-api.ts';
import type { RunEvent } from '../src/runtime/run-events.ts';
import { StoreCorruptError, StoreVersionError } from '../src/store/errors.ts';
import { FileStore } from '../src/store/file-store.ts';
import { tempDir } from './helpers/temp-dir.ts';

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

async function resumeDemo(dir: string, events: RunEvent[]) {
  return resumeRun({
    store: new FileStore(path.join(dir, '.durable-agent')),
    model: scriptedModel(demoScript()),
    tools: demoTools(dir),
    observer: (e) => events.push(e),
  });
}

let offsetsTried = 0;

describe('a cut inside the last record, at every byte offset', () => {
  it.each(['after-save-a:3', 'after-effect-write:3', 'after-save-b:2'])('last record written at %s: every cut resumes from the record before, and says so', async (label) => {
    const { dir, journal } = await crashedDemo(label);
    const original = fs.readFileSync(journal);
    const loaded = await new FileStore(path.dirname(journal)).load();
    const last = loaded.records.at(-1)!;
    const previous = loaded.records.at(-2)!;
    for (let cut = last.offset; cut < original.length; cut++) {
      const copy = copyRun(dir);
      fs.writeFileSync(path.join(copy, '.durable-agent', 'journal.jsonl'), original.subarray(0, cut));
      const events: RunEvent[] = [];
      const result = await resumeDemo(copy, events);
      const resumed = events.find((e) => e.type === 'resumed');
      expect(resumed, `cut at ${cut}`).toMatchObject({
        state: previous.record.state,
        tornTail: { offset: last.offset, bytes: cut - last.offset, lostCommittedRecord: last.record.seq },
      });
      expect(result.status).toBe('done');
      // Never twice: the report is written at most once over the crashed run and the resume.
      const audit = fs.readFileSync(path.join(copy, 'report-audit.log'), 'utf8').trim().split('\n');
      expect(audit).toHaveLength(1);
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
  it('refuses a flip of any byte of the journal, except that a lost final newline reads as a cut-off last record', async () => {
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
      if (at === original.length - 1) {
        // The last record's newline gone: exactly what a cut at that byte looks like; recovered, and said.
        expect(outcome).toMatchObject({ tornTail: { lostCommittedRecord: lastSeq } });
        continue;
      }
      expect(outcome instanceof StoreCorruptError || outcome instanceof StoreVersionError, `flip at byte ${at}`).toBe(true);
      refused += 1;
    }
    expect(refused).toBe(original.length - 1);
    console.log(`[damaged bytes] ${refused} single-byte flips refused`);
  });
});

describe('garbage appended after the last record', () => {
  it('is refused when it forms a whole line', async () => {
    const { journal } = await crashedDemo('after-save-b:1');
    fs.appendFileSync(journal, '{"seq":99}\n');
    await expect(new FileStore(path.dirname(journal)).load()).rejects.toThrow(StoreCorruptError);
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
