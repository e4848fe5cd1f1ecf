/**
 * `history --transcript`: a run's conversation in the terminal, one line an entry cut to the
 * terminal's width (80 when stdout is not one), or all of it with --full; and the conversation
 * kept whole past compaction, which replaced the older turns in the run's context.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, type ScriptedStep, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { readRunTranscript, type TranscriptEntry } from '../../src/runtime/run-transcript.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { transcriptLines } from '../../src/words/transcript-lines.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

describe('history --transcript of the demo waiting for approval', () => {
  const dir = tempDir();
  let started: ReturnType<typeof runCliAsync>;
  beforeAll(() => {
    started = runCliAsync(['demo', '--require-approval', 'write_report', '--no-wait'], { cwd: dir });
  });

  it('prints each entry on one line of at most 80 characters, the open call last', async () => {
    const demo = await started;
    expect(demo.code, demo.stderr).toBe(7);
    const run = await runCliAsync(['history', '--transcript'], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('user       Turn sales-notes.txt into a short report and write it to report.txt.');
    expect(lines).toContain('tool call  read_notes toolu_01 {}');
    expect(lines).toContain('result     count_words toolu_02: 57 words');
    expect(lines.find((line) => line.startsWith('result     read_notes toolu_01: Q3 sales notes - North region'))).toMatch(/…$/);
    expect(lines.at(-1)).toBe('open call  write_report toolu_03: waits for approval');
    for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(80);
  });

  it('--full prints every line of the texts and the inputs as indented JSON', async () => {
    const demo = await started;
    expect(demo.code, demo.stderr).toBe(7);
    const run = await runCliAsync(['history', '--transcript', '--full'], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('result     read_notes toolu_01: Q3 sales notes\n           - North region closed 14 new accounts; revenue up 12% on Q2.\n');
    expect(run.stdout).toContain('tool call  write_report toolu_03 {\n             "content": "Sales report: Q3 sales notes');
    expect(run.stdout).not.toContain('…');
  });

  it('--json prints the entries; --full alone is refused', async () => {
    const demo = await started;
    expect(demo.code, demo.stderr).toBe(7);
    const run = await runCliAsync(['history', '--transcript', '--json'], { cwd: dir });
    const transcript = JSON.parse(run.stdout) as { entries: TranscriptEntry[] };
    expect(transcript.entries.filter((entry) => entry.kind === 'tool-use').map((entry) => entry.kind === 'tool-use' && entry.name)).toEqual(['read_notes', 'count_words', 'write_report']);
    const refused = await runCliAsync(['history', '--full'], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--full goes with --transcript');
  });
});

describe('the transcript past compaction', () => {
  const page = defineTool<{ n: number }>({
    name: 'read_page',
    description: 'reads page n',
    inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    readOnly: true,
    run: ({ n }) => `page ${n}: ${'lorem ipsum '.repeat(200)}`.slice(0, 2048),
  });

  it('keeps every turn, with a line where a summary took the place of the older ones', async () => {
    const TURNS = 40;
    const steps: ScriptedStep[] = Array.from({ length: TURNS }, (_, i) => toolUseReply([{ id: `toolu_${i + 1}`, name: 'read_page', input: { n: i + 1 } }], `Reading page ${i + 1}.`));
    steps.push(endTurnReply('Read them all.'));
    const store = new FileStore(path.join(tempDir(), '.durable-agent'));
    const result = await startRun({ store, model: scriptedModel(steps, { contextWindow: 12_000 }), tools: [page], task: 'Read the pages.', maxTurns: TURNS + 1, compaction: { mode: 'client', contextWindow: 12_000 } });
    expect(result.status).toBe('done');
    const { entries } = await readRunTranscript(store);
    const compactions = entries.filter((entry) => entry.kind === 'compacted');
    expect(compactions.length).toBeGreaterThan(1);
    expect(entries.filter((entry) => entry.kind === 'tool-use').map((entry) => entry.kind === 'tool-use' && entry.id)).toEqual(Array.from({ length: TURNS }, (_, i) => `toolu_${i + 1}`));
    expect(entries.filter((entry) => entry.kind === 'tool-result')).toHaveLength(TURNS);
    expect(entries[0]).toEqual({ kind: 'text', role: 'user', text: 'Read the pages.' });
    expect(entries.at(-1)).toEqual({ kind: 'text', role: 'assistant', text: 'Read them all.' });
    const lines = transcriptLines(entries, { width: 200, full: false });
    expect(lines.find((line) => line.startsWith('compacted'))).toMatch(/^compacted {2}a summary took the place of the \d+ messages above: /);
    for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(200);
  });

  it('collapses thinking to one line unless full, and never splits a character', () => {
    const entries: TranscriptEntry[] = [
      { kind: 'thinking', text: 'First I look.\nThen I act.', redacted: false },
      { kind: 'text', role: 'assistant', text: `${'é'.repeat(30)}😀😀😀😀😀😀😀😀😀😀😀😀` },
    ];
    expect(transcriptLines(entries, { width: 40, full: false })).toEqual([
      'thinking   (25 characters) First I look…',
      `assistant  ${'é'.repeat(28)}…`,
    ]);
    expect(transcriptLines(entries, { width: 60, full: false })[0]).toBe('thinking   (25 characters) First I look. Then I act.');
    expect(transcriptLines(entries, { width: 60, full: false })[1]).toBe(`assistant  ${'é'.repeat(30)}😀😀😀😀😀😀😀😀😀😀😀😀`);
    expect(transcriptLines(entries, { width: 45, full: false })[1]).toBe(`assistant  ${'é'.repeat(30)}😀😀😀…`);
    expect(transcriptLines(entries, { width: 40, full: true })[0]).toBe('thinking   First I look.');
    expect(transcriptLines(entries, { width: 40, full: true })[1]).toBe('           Then I act.');
  });
});

describe('the transcript of a reply with server tool blocks', () => {
  it("says what each server tool asked and what kind of answer it got, never its encrypted content, in lines and in --json", async () => {
    const dir = tempDir();
    const store = new FileStore(path.join(dir, '.durable-agent'));
    const reply = {
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'durable agents' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [{ type: 'web_search_result', url: 'https://a.example', title: 'A', encrypted_content: 'c2VhbGVkLXBhZ2UtY29udGVudA==', page_age: null }] },
        { type: 'text', text: 'Found one.' },
      ],
      stop_reason: 'end_turn',
      usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
    };
    await startRun({ store, model: scriptedModel([reply as Parameters<typeof scriptedModel>[0][number]]), tools: [], task: 'Search.' });
    const { entries } = await readRunTranscript(store);
    store.close();
    const lines = transcriptLines(entries, { width: 200, full: false });
    expect(lines).toContain('server tool web_search "durable agents" srvtoolu_01');
    expect(lines).toContain('server tool srvtoolu_01 → 1 result');
    expect(lines.join('\n')).not.toContain('c2VhbGVk');
    const json = await runCliAsync(['history', '--transcript', '--json'], { cwd: dir });
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).not.toContain('c2VhbGVk');
    expect(json.stdout).toContain('[encrypted, 28 characters]');
  });
});
