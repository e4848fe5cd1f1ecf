/**
 * A journal as this release writes it, committed as bytes: the commit mark rewritten in place
 * after the header, and a demo killed right after its third ledger entry, the turn's last, which
 * is written without an fsync of its own (the mark counts 11 records, the file holds 12). A later
 * change of the journal's framing must still read it, and resume it as this release does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/core/run-events.ts';
import { demoScript } from '../../src/demo/demo-task.ts';
import { AUDIT_FILE, demoTools } from '../../src/demo/demo-tools.ts';
import { scriptedModel } from '../../src/model/scripted-model.ts';
import { resumeRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { parseCommitMark } from '../../src/store/journal/framing.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const FIXTURE = path.join(import.meta.dirname, '..', 'fixtures', 'killed-at-a-ledger-entry');

/** The run's folder as the kill left it (no state folder is committed: it is kept under another name). */
function killedRun(): { dir: string; state: string } {
  const dir = tempDir();
  fs.cpSync(FIXTURE, dir, { recursive: true });
  const state = path.join(dir, '.durable-agent');
  fs.renameSync(path.join(dir, 'state-as-written'), state);
  fs.chmodSync(state, 0o700);
  return { dir, state };
}

describe('a journal written with the commit mark in place, killed after a ledger entry the mark does not count yet', () => {
  it('reads whole: the mark counts the records up to checkpoint A, the entry after it is read too', async () => {
    const { state } = killedRun();
    const bytes = fs.readFileSync(path.join(state, 'journal.jsonl'));
    const mark = parseCommitMark(bytes, bytes.indexOf(0x0a) + 1, 2);
    const loaded = await new FileStore(state).load();
    expect(mark.records).toBe(11);
    expect(loaded.records.map((stored) => stored.record.event).slice(-3)).toEqual(['MODEL_USAGE', 'MODEL_REPLY', 'TOOL_RESULT']);
    expect(loaded.records).toHaveLength(12);
    expect(loaded.tornTail).toBeNull();
  });

  it('resumes to the end: the ledger hit is reused and the report is not written again', async () => {
    const { dir, state } = killedRun();
    const events: RunEvent[] = [];
    const result = await resumeRun({
      store: new FileStore(state),
      model: scriptedModel(demoScript(), { name: 'scripted-demo' }),
      tools: demoTools(dir),
      command: 'demo',
      observer: (event) => events.push(event),
    });
    expect(result.status).toBe('done');
    expect(events.find((event) => event.type === 'reconciled')).toMatchObject({ call: { id: 'toolu_03' }, decision: 'reused' });
    // write_report appends a line to its audit log each time it really runs: it never ran here.
    expect(fs.existsSync(path.join(dir, AUDIT_FILE))).toBe(false);
    const reread = await new FileStore(state).load();
    expect(reread.records.at(-1)!.record.state).toBe('done');
  });
});
