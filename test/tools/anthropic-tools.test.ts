/**
 * The Anthropic-defined client tools on real files and a real /bin/bash: each command of the text
 * editor and the memory tool with its errors and its path escapes, the receipts that let
 * verify() tell a made edit from one not made, the bash tool's limits and environment; the
 * request's `{ type, name }`; and the per-call read-only trait the resume, the scheduler and
 * approval read. In-process resumes after a simulated crash show each edit made once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { Message } from '../../machines/agent-loop.types.ts';
import { needsDecisionOf } from '../../src/awaits/needs-decision.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { planReconcile } from '../../src/reconcile/reconcile.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import { changedTools, runOriginOf } from '../../src/runtime/run-origin.ts';
import { mayOverlap } from '../../src/runtime/tool-scheduler.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { foldJournal } from '../../src/store/journal/fold-journal.ts';
import { bashTool, memoryTool, textEditorTool } from '../../src/tools/anthropic/index.ts';
import { MADE_BEFORE_RESUME } from '../../src/tools/anthropic/file-editor.ts';
import { executeCall, idempotencyKeyFor } from '../../src/tools/execute-call.ts';
import { PathOutsideError } from '../../src/tools/path-errors.ts';
import { readOnlyFor, type ToolContext, type ToolDefinition } from '../../src/tools/tool.ts';
import { schemaHash } from '../../src/tools/schema-hash.ts';
import { toolContractHash } from '../../src/tools/tool-contract.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
import { toolResultOf } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

let calls = 0;
/** A fresh call each time: its own tool_use_id, so its own idempotency key and receipt. */
function context(): ToolContext {
  calls += 1;
  const toolUseId = `toolu_${calls}`;
  return { toolUseId, idempotencyKey: idempotencyKeyFor('run_t', toolUseId), runId: 'run_t', signal: new AbortController().signal };
}

/** A working directory and a directory beside it that the tools must never reach. */
function dirs(): { dir: string; outside: string } {
  const base = tempDir('da-anthropic-');
  const dir = path.join(base, 'work');
  const outside = path.join(base, 'elsewhere');
  fs.mkdirSync(dir);
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'keep out\n');
  return { dir, outside };
}

const run = async (tool: ToolDefinition, input: unknown, ctx = context()) => String(await tool.run(input, ctx));
const refusal = async (tool: ToolDefinition, input: unknown): Promise<Error> => {
  try {
    await tool.run(input, context());
  } catch (error) {
    return error as Error;
  }
  throw new Error(`${JSON.stringify(input)} was not refused`);
};
const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file), 'utf8');

describe('the request names the Anthropic-defined tools by type', () => {
  it('{ type, name } and the type’s options, never a description or schema; our own tools as before', () => {
    const dir = tempDir();
    const registry = new ToolRegistry([textEditorTool(dir), memoryTool(dir), bashTool(dir), textEditorTool(dir, { maxCharacters: 5000 })].slice(0, 3));
    expect(registry.specs).toEqual([
      { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' },
      { type: 'memory_20250818', name: 'memory' },
      { type: 'bash_20250124', name: 'bash' },
    ]);
    expect(new ToolRegistry([textEditorTool(dir, { maxCharacters: 5000 })]).specs).toEqual([{ type: 'text_editor_20250728', name: 'str_replace_based_edit_tool', max_characters: 5000 }]);
  });

  it('the type and options are part of the pinned contract: a resume notices another version or max_characters', () => {
    const dir = tempDir();
    const started = runOriginOf('run', 'm', [textEditorTool(dir)]);
    expect(changedTools(started, runOriginOf('run', 'm', [textEditorTool(dir)])).size).toBe(0);
    const capped = runOriginOf('run', 'm', [textEditorTool(dir, { maxCharacters: 100 })]);
    expect(changedTools(started, capped).get('str_replace_based_edit_tool')).toMatch(/the input schema of tool str_replace_based_edit_tool changed/);
    const other = { ...textEditorTool(dir), anthropicDefined: { type: 'text_editor_20250429' } };
    expect(toolContractHash(other)).not.toBe(toolContractHash(textEditorTool(dir)));
    // A tool of our own hashes as it always did: the runs already stored resume unchanged.
    const own = { inputSchema: { type: 'object' } };
    expect(toolContractHash(own)).toBe(schemaHash(own.inputSchema));
  });

  it('input is still checked against the schema here before a command runs', async () => {
    const dir = tempDir();
    const registry = new ToolRegistry([textEditorTool(dir)]);
    const outcome = await executeCall(registry, 'r', { id: 'c', name: 'str_replace_based_edit_tool', input: { command: 'create', path: 'a.txt' } });
    expect(outcome).toMatchObject({ kind: 'rejected', is_error: true });
    expect(String(outcome.content)).toMatch(/must have required property 'file_text'/);
    expect(fs.existsSync(path.join(dir, 'a.txt'))).toBe(false);
    const undo = await executeCall(registry, 'r', { id: 'd', name: 'str_replace_based_edit_tool', input: { command: 'undo_edit', path: 'a.txt' } });
    expect(String(undo.content)).toMatch(/command must be equal to one of the allowed values/);
  });
});

describe('text editor: view', () => {
  it('a file with line numbers, a range of it, and the end of the range -1', async () => {
    const { dir } = dirs();
    fs.writeFileSync(path.join(dir, 'a.txt'), 'one\ntwo\nthree\n');
    const editor = textEditorTool(dir);
    expect(await run(editor, { command: 'view', path: 'a.txt' })).toBe("Here's the content of a.txt with line numbers:\n     1\tone\n     2\ttwo\n     3\tthree");
    expect(await run(editor, { command: 'view', path: 'a.txt', view_range: [2, 2] })).toMatch(/\n {5}2\ttwo$/);
    expect(await run(editor, { command: 'view', path: 'a.txt', view_range: [2, -1] })).toMatch(/\n {5}2\ttwo\n {5}3\tthree$/);
    expect((await refusal(editor, { command: 'view', path: 'a.txt', view_range: [3, 1] })).message).toMatch(/Invalid view_range \[3, 1\] for a\.txt, which has 3 lines/);
    expect((await refusal(editor, { command: 'view', path: 'a.txt', view_range: [9, -1] })).name).toBe('ViewRangeError');
  });

  it('a directory lists its files, without the run’s state', async () => {
    const { dir } = dirs();
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(path.join(dir, 'src', 'b.ts'), '');
    fs.mkdirSync(path.join(dir, '.durable-agent'));
    fs.writeFileSync(path.join(dir, '.durable-agent', 'journal'), '');
    const listing = await run(textEditorTool(dir), { command: 'view', path: '.' });
    expect(listing).toBe('Here are the files in .:\nsrc/b.ts');
  });

  it('max_characters caps what view shows, and says so', async () => {
    const { dir } = dirs();
    fs.writeFileSync(path.join(dir, 'big.txt'), 'x'.repeat(500));
    const shown = await run(textEditorTool(dir, { maxCharacters: 100 }), { command: 'view', path: 'big.txt' });
    expect(shown).toMatch(/^Here's the content/);
    expect(shown).toMatch(/\(truncated: the first 100 of \d+ characters are shown; use view_range to see the rest\)$/);
  });

  it('a missing file, and a directory where a file is needed, in the editor’s words', async () => {
    const { dir } = dirs();
    const editor = textEditorTool(dir);
    const missing = await refusal(editor, { command: 'view', path: 'nope/a.txt' });
    expect(missing).toMatchObject({ name: 'PathNotFoundError', message: `The path nope/a.txt does not exist (nope is missing). View a directory of the working directory (${dir}) to see what is there.` });
    fs.mkdirSync(path.join(dir, 'd'));
    expect((await refusal(editor, { command: 'str_replace', path: 'd', old_str: 'x', new_str: 'y' })).message).toBe('The path d is a directory, not a file: give the path of a file (view d lists what is in it).');
  });
});

describe('text editor: create, str_replace, insert', () => {
  it('create makes a new file (directories too) and refuses to overwrite one', async () => {
    const { dir } = dirs();
    const editor = textEditorTool(dir);
    expect(await run(editor, { command: 'create', path: 'src/new.ts', file_text: 'export {};\n' })).toBe('File created successfully at: src/new.ts');
    expect(read(dir, 'src/new.ts')).toBe('export {};\n');
    const again = await refusal(editor, { command: 'create', path: 'src/new.ts', file_text: 'other' });
    expect(again).toMatchObject({ name: 'FileExistsError', message: expect.stringMatching(/^src\/new\.ts already exists: create makes new files only/) });
    expect(read(dir, 'src/new.ts')).toBe('export {};\n');
  });

  it('str_replace replaces the one match and shows the lines around it', async () => {
    const { dir } = dirs();
    fs.writeFileSync(path.join(dir, 'a.py'), 'def f():\n    return 1\n\ndef g():\n    return 2\n');
    const result = await run(textEditorTool(dir), { command: 'str_replace', path: 'a.py', old_str: 'return 2', new_str: 'return 3' });
    expect(read(dir, 'a.py')).toBe('def f():\n    return 1\n\ndef g():\n    return 3\n');
    expect(result).toMatch(/^The file a\.py has been edited\. Here is the snippet showing the change \(with line numbers\):\n/);
    expect(result).toContain('     5\t    return 3');
  });

  it('str_replace refuses old_str that is missing, ambiguous (naming the lines) or empty, and changes nothing', async () => {
    const { dir } = dirs();
    const content = 'x = 1\ny = 1\nz = 2\n';
    fs.writeFileSync(path.join(dir, 'a.py'), content);
    const editor = textEditorTool(dir);
    expect((await refusal(editor, { command: 'str_replace', path: 'a.py', old_str: 'w = 1', new_str: '' })).message).toBe(
      'No replacement was performed: old_str did not appear verbatim in a.py. View the file and copy the text exactly, whitespace and indentation included.',
    );
    expect((await refusal(editor, { command: 'str_replace', path: 'a.py', old_str: '= 1', new_str: '= 5' })).message).toBe(
      'No replacement was performed: old_str appears 2 times in a.py (at lines 1, 2). Include more of the surrounding text in old_str so that it matches exactly one place.',
    );
    expect((await refusal(editor, { command: 'str_replace', path: 'a.py', old_str: '', new_str: 'q' })).name).toBe('EmptyOldTextError');
    expect(read(dir, 'a.py')).toBe(content);
    // new_str may be left out: the match is deleted.
    await run(editor, { command: 'str_replace', path: 'a.py', old_str: 'z = 2\n' });
    expect(read(dir, 'a.py')).toBe('x = 1\ny = 1\n');
  });

  it('insert puts whole lines at the top or after a line, and refuses a line past the end', async () => {
    const { dir } = dirs();
    fs.writeFileSync(path.join(dir, 'a.txt'), 'one\ntwo\n');
    const editor = textEditorTool(dir);
    await run(editor, { command: 'insert', path: 'a.txt', insert_line: 0, insert_text: 'zero\n' });
    expect(read(dir, 'a.txt')).toBe('zero\none\ntwo\n');
    const result = await run(editor, { command: 'insert', path: 'a.txt', insert_line: 3, insert_text: 'three\nfour' });
    expect(read(dir, 'a.txt')).toBe('zero\none\ntwo\nthree\nfour\n');
    expect(result).toMatch(/^The file a\.txt has been edited: 2 lines were inserted after line 3\./);
    expect((await refusal(editor, { command: 'insert', path: 'a.txt', insert_line: 9, insert_text: 'x' })).message).toBe(
      'Invalid insert_line 9: a.txt has 5 lines, so insert_line must be from 0 (before the first line) to 5 (after the last).',
    );
  });
});

describe('text editor: paths stay in the directory, as for the file tools', () => {
  it('"..", an absolute path outside, a symlink out and the run’s state are refused; nothing outside is read or written', async () => {
    const { dir, outside } = dirs();
    fs.symlinkSync(outside, path.join(dir, 'link'));
    const editor = textEditorTool(dir);
    for (const input of [
      { command: 'view', path: '../elsewhere/secret.txt' },
      { command: 'view', path: path.join(outside, 'secret.txt') },
      { command: 'view', path: 'link/secret.txt' },
      { command: 'create', path: 'link/new.txt', file_text: 'x' },
      { command: 'create', path: '../elsewhere/new.txt', file_text: 'x' },
      { command: 'str_replace', path: 'link/secret.txt', old_str: 'keep', new_str: 'gone' },
      { command: 'insert', path: 'link/secret.txt', insert_line: 0, insert_text: 'x' },
      { command: 'create', path: '.durable-agent/edit-receipts/x.json', file_text: '{}' },
    ]) {
      const error = await refusal(editor, input);
      expect(error, JSON.stringify(input)).toBeInstanceOf(PathOutsideError);
      expect(error.message).toMatch(/^The path .* leads (outside the working directory|into \.durable-agent\/)/);
    }
    expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('keep out\n');
  });

  it('an absolute path inside the directory is taken', async () => {
    const { dir } = dirs();
    await run(textEditorTool(dir), { command: 'create', path: path.join(dir, 'abs.txt'), file_text: 'ok' });
    expect(read(dir, 'abs.txt')).toBe('ok');
  });
});

describe('verify(): the receipt and the file decide whether an edit was made', () => {
  const cases: Array<{ name: string; before: string | null; input: Record<string, unknown> }> = [
    { name: 'create', before: null, input: { command: 'create', path: 'a.txt', file_text: 'made\n' } },
    // The anchor stays in place: the file alone could not tell made from not made.
    { name: 'str_replace keeping its anchor', before: 'foo()\n', input: { command: 'str_replace', path: 'a.txt', old_str: 'foo()', new_str: 'foo()\nbar()' } },
    // A line like its neighbour: again the content alone could not tell.
    { name: 'insert of a line already next to it', before: 'x\nx\n', input: { command: 'insert', path: 'a.txt', insert_line: 1, insert_text: 'x' } },
  ];

  for (const { name, before, input } of cases) {
    it(`${name}: made → happened, with the result it gave; undone → not made; changed since → cannot tell`, async () => {
      const { dir } = dirs();
      const file = path.join(dir, 'a.txt');
      if (before !== null) fs.writeFileSync(file, before);
      const editor = textEditorTool(dir);
      const ctx = context();
      expect(await editor.verify!(input as never, ctx)).toEqual({ happened: false });
      const result = await run(editor, input, ctx);
      const after = read(dir, 'a.txt');
      expect(await editor.verify!(input as never, ctx)).toEqual({ happened: true, result: `${result}\n(${MADE_BEFORE_RESUME})` });
      // The receipt on disk, the file as before: a kill between the two (the edit not made).
      if (before === null) fs.rmSync(file);
      else fs.writeFileSync(file, before);
      expect(await editor.verify!(input as never, ctx)).toEqual({ happened: false });
      fs.writeFileSync(file, 'someone else wrote this\n');
      expect(await editor.verify!(input as never, ctx)).toBeUndefined();
      // Another call's receipt is not this call's.
      fs.writeFileSync(file, after);
      expect(await editor.verify!(input as never, context())).toEqual({ happened: false });
      expect(await editor.verify!({ ...input, path: 'b.txt' } as never, ctx)).toEqual({ happened: false });
    });
  }

  it('the receipts are in the state folder, one per edit, and view writes none', async () => {
    const { dir } = dirs();
    const editor = textEditorTool(dir);
    await run(editor, { command: 'create', path: 'a.txt', file_text: 'a' });
    await run(editor, { command: 'view', path: 'a.txt' });
    await run(editor, { command: 'str_replace', path: 'a.txt', old_str: 'a', new_str: 'b' });
    expect(fs.readdirSync(path.join(dir, '.durable-agent', 'edit-receipts'))).toHaveLength(2);
  });
});

describe('memory tool', () => {
  it('/memories/… lives in memories/ of the directory; view, create, str_replace, insert', async () => {
    const { dir } = dirs();
    const memory = memoryTool(dir);
    expect(await run(memory, { command: 'create', path: '/memories/notes/today.md', file_text: '# Today\n' })).toBe('File created successfully at: /memories/notes/today.md');
    expect(read(dir, 'memories/notes/today.md')).toBe('# Today\n');
    await run(memory, { command: 'insert', path: '/memories/notes/today.md', insert_line: 1, insert_text: '- met Ana' });
    await run(memory, { command: 'str_replace', path: '/memories/notes/today.md', old_str: 'Ana', new_str: 'Ana and Bo' });
    expect(await run(memory, { command: 'view', path: '/memories/notes/today.md' })).toBe("Here's the content of /memories/notes/today.md with line numbers:\n     1\t# Today\n     2\t- met Ana and Bo");
    expect(await run(memory, { command: 'view', path: '/memories' })).toBe('Here are the files in /memories:\n/memories/notes/today.md');
    // Nothing of it outside memories/ (but the receipts, in the run's state).
    expect(fs.readdirSync(dir).sort()).toEqual(['.durable-agent', 'memories']);
  });

  it('paths not under /memories, climbing out of it, or through a link out of it are refused', async () => {
    const { dir, outside } = dirs();
    const memory = memoryTool(dir);
    expect((await refusal(memory, { command: 'view', path: '/etc/passwd' })).message).toBe('The path /etc/passwd is not in the memory directory: every memory path starts with /memories (e.g. /memories/notes.md).');
    expect((await refusal(memory, { command: 'create', path: 'memories/a.md', file_text: 'x' })).name).toBe('MemoryPathError');
    expect((await refusal(memory, { command: 'create', path: '/memoriesX/a.md', file_text: 'x' })).name).toBe('MemoryPathError');
    const climbing = await refusal(memory, { command: 'create', path: '/memories/../escape.md', file_text: 'x' });
    expect(climbing).toBeInstanceOf(PathOutsideError);
    expect(climbing.message).toBe('The path /memories/../escape.md leads outside /memories: use a path inside it.');
    fs.symlinkSync(outside, path.join(dir, 'memories', 'out'));
    expect(await refusal(memory, { command: 'view', path: '/memories/out/secret.txt' })).toBeInstanceOf(PathOutsideError);
    expect(await refusal(memory, { command: 'rename', old_path: '/memories/out/secret.txt', new_path: '/memories/mine.txt' })).toBeInstanceOf(PathOutsideError);
    expect(await refusal(memory, { command: 'delete', path: '/memories/../work' })).toBeInstanceOf(PathOutsideError);
    expect(fs.existsSync(path.join(dir, 'escape.md'))).toBe(false);
    expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
  });

  it('a memories/ folder that is a link out of the directory is refused', async () => {
    const { dir, outside } = dirs();
    fs.symlinkSync(outside, path.join(dir, 'memories'));
    const error = await refusal(memoryTool(dir), { command: 'view', path: '/memories' });
    expect(error).toBeInstanceOf(PathOutsideError);
    expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
  });

  it('delete and rename, each verified from its receipt; /memories itself is kept', async () => {
    const { dir } = dirs();
    const memory = memoryTool(dir);
    await run(memory, { command: 'create', path: '/memories/a/one.md', file_text: '1' });
    await run(memory, { command: 'create', path: '/memories/b.md', file_text: 'b' });
    const rename = { command: 'rename', old_path: '/memories/a', new_path: '/memories/c/a' };
    const renameCtx = context();
    expect(await run(memory, rename, renameCtx)).toBe('Successfully renamed /memories/a to /memories/c/a');
    expect(read(dir, 'memories/c/a/one.md')).toBe('1');
    expect(await memory.verify!(rename as never, renameCtx)).toMatchObject({ happened: true });
    const del = { command: 'delete', path: '/memories/b.md' };
    const delCtx = context();
    expect(await run(memory, del, delCtx)).toBe('Successfully deleted /memories/b.md');
    expect(fs.existsSync(path.join(dir, 'memories', 'b.md'))).toBe(false);
    expect(await memory.verify!(del as never, delCtx)).toMatchObject({ happened: true });
    // The file back as it was: the receipt's "before" — the delete had not been made.
    fs.writeFileSync(path.join(dir, 'memories', 'b.md'), 'b');
    expect(await memory.verify!(del as never, delCtx)).toEqual({ happened: false });
    expect((await refusal(memory, { command: 'delete', path: '/memories' })).message).toBe('Cannot delete the /memories directory itself: name a file or directory inside it.');
    expect((await refusal(memory, { command: 'rename', old_path: '/memories/', new_path: '/memories/x' })).name).toBe('MemoryRootError');
    expect((await refusal(memory, { command: 'rename', old_path: '/memories/b.md', new_path: '/memories/c/a/one.md' })).name).toBe('DestinationExistsError');
    expect((await refusal(memory, { command: 'delete', path: '/memories/none.md' })).message).toMatch(/^The path \/memories\/none\.md does not exist/);
  });
});

/** A key of the real shape, made up (joined here so that no key-shaped text is committed). */
const FAKE_KEY = ['sk', 'ant', 'test-secret'].join('-');

describe('bash tool', () => {
  it('runs in the directory with a minimal environment: no key or other secret of the agent', async () => {
    const { dir } = dirs();
    process.env.ANTHROPIC_API_KEY = FAKE_KEY;
    try {
      const out = await run(bashTool(dir), { command: 'pwd; env' });
      expect(out.split('\n')[0]).toBe(fs.realpathSync(dir));
      expect(out).not.toContain(FAKE_KEY);
      expect(out).not.toContain('ANTHROPIC');
      expect(out).toContain(`HOME=${dir}`);
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
    }
  });

  it('says the exit code of a failing command, and has no session to restart', async () => {
    const { dir } = dirs();
    const bash = bashTool(dir);
    expect(await run(bash, { command: 'echo oops >&2; exit 3' })).toBe('oops\n(exit code 3)');
    expect(await run(bash, { command: 'true' })).toBe('(no output)');
    expect(await run(bash, { restart: true })).toMatch(/^Nothing to restart: every command runs in a fresh shell/);
  });

  it('a command past its time limit is killed with what it started, and the model is told what it wrote', async () => {
    const { dir } = dirs();
    // Ten minutes of sleep: a limit that did not kill would outlast the test's own timeout.
    const error = await refusal(bashTool(dir, { timeoutMs: 300 }), { command: 'echo begun; (sleep 600; touch late) & echo $! > bg.pid; sleep 600' });
    expect(error).toMatchObject({ name: 'BashTimeoutError', timeoutMs: 300 });
    const background = Number(fs.readFileSync(path.join(dir, 'bg.pid'), 'utf8'));
    // Gone, or a zombie waiting for its reaper (it no longer runs).
    const alive = (pid: number) => {
      try {
        return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    await vi.waitFor(() => expect(alive(background), 'the process the command started in the background').toBe(false), { timeout: 20_000, interval: 50 });
    expect(error.message).toMatch(/^The command did not finish within 300 ms and was killed \(with every process it started\)\./);
    expect(error.message).toMatch(/Its output so far:\nbegun\n$/);
  });

  it('output past maxOutputBytes is dropped, and the result says how much', async () => {
    const { dir } = dirs();
    const out = await run(bashTool(dir, { maxOutputBytes: 100 }), { command: 'head -c 1000 /dev/zero | tr "\\0" a' });
    expect(out).toBe(`${'a'.repeat(100)}\n(output truncated: the first 100 bytes are shown, 900 more were not)`);
  });

  it('a command is read-only only when declared so, exactly or by a RegExp matching all of it', () => {
    const bash = bashTool('.', { readOnlyCommands: ['git status', /ls( -l)?( [\w./-]+)?/] });
    expect(readOnlyFor(bash, { command: 'git status' })).toBe(true);
    expect(readOnlyFor(bash, { command: 'ls -l src' })).toBe(true);
    expect(readOnlyFor(bash, { command: 'ls; rm -rf src' })).toBe(false);
    expect(readOnlyFor(bash, { command: 'git status && git push' })).toBe(false);
    expect(readOnlyFor(bash, { restart: true })).toBe(true);
    expect(readOnlyFor(bashTool('.'), { command: 'ls' })).toBe(false);
  });
});

describe('read-only per call: one trait, read by the resume, the scheduler and the tool’s own tests', () => {
  it('readOnlyFor: the tool’s readOnly, else its readOnlyWhen of the input; a throw counts as a side effect', () => {
    const editor = textEditorTool('.');
    expect(readOnlyFor(editor, { command: 'view', path: 'a' })).toBe(true);
    for (const command of ['create', 'str_replace', 'insert']) expect(readOnlyFor(editor, { command, path: 'a' })).toBe(false);
    expect(readOnlyFor({ readOnly: true, readOnlyWhen: () => false }, {})).toBe(true);
    expect(readOnlyFor({ readOnly: false, readOnlyWhen: () => { throw new Error('cannot say'); } }, {})).toBe(false);
    expect(readOnlyFor({ readOnly: false }, {})).toBe(false);
  });

  it('the resume’s plan re-runs a view and verifies an edit of the same tool', () => {
    const editor = textEditorTool('.');
    const view = { id: 'v', name: editor.name, input: { command: 'view', path: 'a' } };
    const edit = { id: 'e', name: editor.name, input: { command: 'create', path: 'a', file_text: '' } };
    const traits = (_name: string, call: { input: unknown }) => ({ readOnly: readOnlyFor(editor, call.input), canVerify: true });
    expect(planReconcile([view, edit], new Map(), traits).map((d) => `${d.call.id}:${d.kind}:${d.rule}`)).toEqual(['v:rerun:read-only', 'e:verify:verify']);
  });

  it('--require-approval side-effects holds the edits for a person, not the views', async () => {
    const reply = toolUseReply([
      { id: 'v', name: 'str_replace_based_edit_tool', input: { command: 'view', path: 'a' } },
      { id: 'e', name: 'str_replace_based_edit_tool', input: { command: 'create', path: 'a', file_text: '' } },
    ]);
    expect(await needsDecisionOf(reply, new ToolRegistry([textEditorTool('.')]), { requireApproval: 'side-effects', allowQuestions: false })).toEqual({ e: 'approval' });
  });

  it('the scheduler lets views run side by side and an edit alone', () => {
    const registry = new ToolRegistry([textEditorTool('.')]);
    expect(mayOverlap(registry, { id: 'v', name: 'str_replace_based_edit_tool', input: { command: 'view', path: 'a' } })).toBe(true);
    expect(mayOverlap(registry, { id: 'e', name: 'str_replace_based_edit_tool', input: { command: 'insert', path: 'a', insert_line: 0, insert_text: '' } })).toBe(false);
  });
});

describe('a resume after a crash between the edit and its record makes each edit once', () => {
  const messagesOf = async (store: FileStore): Promise<Message[]> => foldJournal(store.location, await store.load()).context.messages;

  it('create, str_replace and insert each killed right after it returned: verified, not made again, and the model told so', async () => {
    const { dir } = dirs();
    fs.writeFileSync(path.join(dir, 'log.txt'), 'start\n');
    const steps = () => [
      toolUseReply([{ id: 'c1', name: 'str_replace_based_edit_tool', input: { command: 'create', path: 'new.txt', file_text: 'hello\n' } }]),
      toolUseReply([{ id: 'c2', name: 'str_replace_based_edit_tool', input: { command: 'str_replace', path: 'log.txt', old_str: 'start', new_str: 'start\nmore' } }]),
      toolUseReply([{ id: 'c3', name: 'str_replace_based_edit_tool', input: { command: 'insert', path: 'log.txt', insert_line: 0, insert_text: 'top' } }]),
      toolUseReply([{ id: 'c4', name: 'str_replace_based_edit_tool', input: { command: 'view', path: 'log.txt' } }]),
      endTurnReply('done'),
    ];
    const store = new FileStore(path.join(dir, '.durable-agent'));
    const events: RunEvent[] = [];
    const observer = (event: RunEvent) => events.push(event);
    await expect(startRun({ store, model: scriptedModel(steps()), tools: [textEditorTool(dir)], task: 't', crashAfter: 'after-tool-return:1' })).rejects.toThrow(SimulatedCrash);
    // Each resume verifies the edit left open, then is killed right after the next call returns.
    for (let i = 0; i < 3; i++) {
      await expect(resumeRun({ store, model: scriptedModel(steps()), tools: [textEditorTool(dir)], observer, crashAfter: 'after-tool-return:1' })).rejects.toThrow(SimulatedCrash);
    }
    const result = await resumeRun({ store, model: scriptedModel(steps()), tools: [textEditorTool(dir)], observer });
    expect(result.status).toBe('done');
    expect(read(dir, 'new.txt')).toBe('hello\n');
    expect(read(dir, 'log.txt')).toBe('top\nstart\nmore\n');
    const decisions = events.flatMap((e) => (e.type === 'reconciled' ? [`${e.call.id}:${e.decision}`] : []));
    expect(decisions).toEqual(['c1:verified-done', 'c2:verified-done', 'c3:verified-done', 'c4:re-ran-read-only']);
    const messages = await messagesOf(store);
    for (const id of ['c1', 'c2', 'c3']) {
      const block = toolResultOf(messages, id);
      expect(block?.is_error ?? false).toBe(false);
      expect(JSON.stringify(block)).toContain('it was not made again');
    }
  });

  it('bash: a command declared read-only runs again; any other is reported as unknown and not run again', async () => {
    for (const [command, decision, lines] of [
      ['cat log.txt', 're-ran-read-only', 1],
      ['echo more >> log.txt', 'unknown-reported', 2],
    ] as const) {
      const { dir } = dirs();
      fs.writeFileSync(path.join(dir, 'log.txt'), 'first\n');
      const tools = () => [bashTool(dir, { readOnlyCommands: ['cat log.txt'] })];
      const steps = () => [toolUseReply([{ id: 'b1', name: 'bash', input: { command } }]), endTurnReply('done')];
      const store = new FileStore(path.join(dir, '.durable-agent'));
      const events: RunEvent[] = [];
      await expect(startRun({ store, model: scriptedModel(steps()), tools: tools(), task: 't', crashAfter: 'after-tool-return:1' })).rejects.toThrow(SimulatedCrash);
      await resumeRun({ store, model: scriptedModel(steps()), tools: tools(), observer: (event) => events.push(event) });
      expect(events.flatMap((e) => (e.type === 'reconciled' ? [e.decision] : []))).toEqual([decision]);
      expect(read(dir, 'log.txt').split('\n').filter(Boolean)).toHaveLength(lines);
      const block = toolResultOf(await messagesOf(store), 'b1');
      expect(block?.is_error ?? false).toBe(decision === 'unknown-reported');
    }
  });
});
