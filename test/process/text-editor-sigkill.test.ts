/**
 * `durable-agent run --tools text-editor|memory|bash`, the real CLI and SDK against the fake
 * Messages API emulating a model that calls Claude's client tools: the request names them by
 * type; an edit killed by a real SIGKILL after it was made and before its outcome was recorded
 * is verified on resume, made once, and the model told it had happened; a bash command killed so
 * is reported to the model as unknown, not run again; memory files stay under memories/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContentBlock } from '../../machines/agent-loop.types.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { clientToolsModel, type PlannedCall, toolsOf } from '../helpers/fake-client-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-sonnet-5-5';
const EDITOR = 'str_replace_based_edit_tool';

async function withModel<T>(plan: readonly PlannedCall[], body: (model: ReturnType<typeof clientToolsModel>, fake: FakeAnthropic, env: Record<string, string>) => Promise<T>): Promise<T> {
  const model = clientToolsModel(plan);
  const fake = new FakeAnthropic(model.responder);
  const url = await fake.start();
  try {
    return await body(model, fake, { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url });
  } finally {
    await fake.stop();
  }
}

const run = (dir: string, env: Record<string, string>, args: string[], extra: Record<string, string> = {}) => runCliAsync(['run', ...args, '--plain'], { cwd: dir, env: { ...env, ...extra } });
const start = (tools: string) => ['--model', MODEL, '--tools', tools, '--task', 'Tidy the notes'];
const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file), 'utf8');
const resultText = (block: ContentBlock | undefined) => (typeof block?.content === 'string' ? block.content : JSON.stringify(block?.content));

/** view, str_replace, create, insert, view: the edits are tool returns 2, 3 and 4. */
const EDIT_PLAN: PlannedCall[] = [
  { name: EDITOR, input: { command: 'view', path: 'notes.md' } },
  // Keeps its anchor: made or not, "alpha" is in the file; only the receipt tells.
  { name: EDITOR, input: { command: 'str_replace', path: 'notes.md', old_str: 'alpha', new_str: 'alpha\nbeta' } },
  { name: EDITOR, input: { command: 'create', path: 'summary.md', file_text: 'One line of notes.\n' } },
  { name: EDITOR, input: { command: 'insert', path: 'notes.md', insert_line: 1, insert_text: 'Edited by Claude.' } },
  { name: EDITOR, input: { command: 'view', path: 'notes.md' } },
];
const NOTES_AFTER = '# Notes\nEdited by Claude.\nalpha\nbeta\n';

function notesDir(): string {
  const dir = tempDir('da-editor-');
  fs.writeFileSync(path.join(dir, 'notes.md'), '# Notes\nalpha\n');
  return dir;
}

describe('run --tools text-editor', () => {
  it('end to end: the request names the tool by type, every command runs in DIR, the model reads the results', async () => {
    await withModel(EDIT_PLAN, async (model, fake, env) => {
      const dir = notesDir();
      const done = await run(dir, env, start('text-editor'));
      expect(done.code, done.stderr).toBe(0);
      expect(read(dir, 'notes.md')).toBe(NOTES_AFTER);
      expect(read(dir, 'summary.md')).toBe('One line of notes.\n');
      expect(fake.requests).toHaveLength(EDIT_PLAN.length + 1);
      for (const request of fake.requests) expect(toolsOf(request)).toEqual([{ type: 'text_editor_20250728', name: EDITOR }]);
      const results = model.results();
      expect(results.map((block) => block.is_error ?? false)).toEqual([false, false, false, false, false]);
      expect(resultText(results[0])).toBe("Here's the content of notes.md with line numbers:\n     1\t# Notes\n     2\talpha");
      expect(resultText(results[2])).toBe('File created successfully at: summary.md');
      expect(done.stdout).toContain('[done] Done.');
    });
  });

  it.each([
    ['str_replace', 2],
    ['create', 3],
    ['insert', 4],
  ])('a %s killed (SIGKILL) after the edit and before its record: the resume verifies it, makes it once, and tells the model it had happened', async (_command, toolReturn) => {
    await withModel(EDIT_PLAN, async (model, fake, env) => {
      const dir = notesDir();
      const killed = await run(dir, env, start('text-editor'), { CRASH_AFTER: `after-tool-return:${toolReturn}`, CRASH_MODE: 'sigkill' });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      expect(fake.requests).toHaveLength(toolReturn);
      // The resume names no tools: it takes the run's own from its journal.
      const resumed = await run(dir, env, ['--resume']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(read(dir, 'notes.md')).toBe(NOTES_AFTER);
      expect(read(dir, 'summary.md')).toBe('One line of notes.\n');
      for (const request of fake.requests) expect(toolsOf(request)).toEqual([{ type: 'text_editor_20250728', name: EDITOR }]);
      const verified = model.results().find((block) => block.tool_use_id === `toolu_${toolReturn}`);
      expect(verified?.is_error ?? false).toBe(false);
      expect(resultText(verified)).toContain('This edit had already been made before the run was resumed (its receipt and the file agree); it was not made again.');
      expect(fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'), 'utf8')).toContain('"decision":"verified-done"');
    });
  });
});

describe('run --tools memory', () => {
  const plan: PlannedCall[] = [
    { name: 'memory', input: { command: 'create', path: '/memories/progress.md', file_text: '- step 1\n' } },
    { name: 'memory', input: { command: 'str_replace', path: '/memories/progress.md', old_str: '- step 1', new_str: '- step 1\n- step 2' } },
    { name: 'memory', input: { command: 'view', path: '/memories' } },
  ];

  it('killed after the create: made once on resume; the memory files are under memories/ only', async () => {
    await withModel(plan, async (model, fake, env) => {
      const dir = tempDir('da-memory-');
      const killed = await run(dir, env, start('memory'), { CRASH_AFTER: 'after-tool-return:1', CRASH_MODE: 'sigkill' });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      const resumed = await run(dir, env, ['--resume']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(read(dir, 'memories/progress.md')).toBe('- step 1\n- step 2\n');
      expect(fs.readdirSync(dir).sort()).toEqual(['.durable-agent', 'memories']);
      expect(fs.readdirSync(path.join(dir, 'memories'))).toEqual(['progress.md']);
      for (const request of fake.requests) expect(toolsOf(request)).toEqual([{ type: 'memory_20250818', name: 'memory' }]);
      expect(resultText(model.results()[0])).toContain('it was not made again');
      expect(resultText(model.results()[2])).toBe('Here are the files in /memories:\n/memories/progress.md');
    });
  });
});

describe('run --tools bash', () => {
  it('a command killed after it ran is reported to the model as unknown on resume, and not run again', async () => {
    const plan: PlannedCall[] = [{ name: 'bash', input: { command: 'echo ran >> log.txt; echo appended' } }];
    await withModel(plan, async (model, fake, env) => {
      const dir = tempDir('da-bash-');
      const killed = await run(dir, env, start('bash'), { CRASH_AFTER: 'after-tool-return:1', CRASH_MODE: 'sigkill' });
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      expect(read(dir, 'log.txt')).toBe('ran\n');
      const resumed = await run(dir, env, ['--resume']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(read(dir, 'log.txt')).toBe('ran\n');
      for (const request of fake.requests) expect(toolsOf(request)).toEqual([{ type: 'bash_20250124', name: 'bash' }]);
      const [result] = model.results();
      expect(result?.is_error).toBe(true);
      expect(resultText(result)).toMatch(/^The state of this bash call \(tool_use_id toolu_1\) from before the process was resumed is unknown/);
    });
  });

  it('runs in DIR with the key kept out of its environment', async () => {
    const plan: PlannedCall[] = [{ name: 'bash', input: { command: 'pwd; env | grep -c ANTHROPIC || true' } }];
    await withModel(plan, async (model, _fake, env) => {
      const dir = tempDir('da-bash-');
      const done = await run(dir, env, start('bash'));
      expect(done.code, done.stderr).toBe(0);
      expect(resultText(model.results()[0])).toBe(`${fs.realpathSync(dir)}\n0\n`);
    });
  });
});
