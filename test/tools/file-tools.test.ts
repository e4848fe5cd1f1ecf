/**
 * The file tools of `durable-agent run` on real files: what a path really names (symlinks, the
 * run's own state, directories, FIFOs, huge files) decides what the model may read or write.
 * Then the same through the real CLI against the fake Messages API.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContentBlock, Message, ToolResultBlock } from '../../machines/agent-loop.types.ts';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { executeCall } from '../../src/tools/execute-call.ts';
import { fileTools } from '../../src/tools/file-tools.ts';
import type { ToolContext, ToolDefinition } from '../../src/tools/tool.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
import { WorkingDirectory } from '../../src/tools/working-directory.ts';
import { runCliAsync, startCli } from '../helpers/cli.ts';
import { assistantTurns, FakeAnthropic } from '../helpers/fake-anthropic.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const CONTEXT: ToolContext = { toolUseId: 'toolu_t', idempotencyKey: 'da_t', runId: 'run_t', signal: new AbortController().signal };
const MAX_READ_BYTES = 200_000;

function tools(dir: string): Record<'list_files' | 'read_file' | 'write_file', ToolDefinition> {
  const [list, read, write] = fileTools(dir);
  return { list_files: list!, read_file: read!, write_file: write! };
}

const read = (dir: string, file: string) => Promise.resolve(tools(dir).read_file.run({ path: file }, CONTEXT));
const write = (dir: string, file: string, content: string) => Promise.resolve(tools(dir).write_file.run({ path: file, content }, CONTEXT));
const list = (dir: string, sub?: string) => Promise.resolve(tools(dir).list_files.run(sub === undefined ? {} : { path: sub }, CONTEXT)) as Promise<string>;
const verify = (dir: string, file: string, content: string) => Promise.resolve(tools(dir).write_file.verify!({ path: file, content }, CONTEXT));

/** A working directory and a directory beside it that the tools must never reach. */
function dirs(): { dir: string; outside: string } {
  const base = tempDir('da-files-');
  const dir = path.join(base, 'work');
  const outside = path.join(base, 'elsewhere');
  fs.mkdirSync(dir);
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'the secret\n');
  return { dir, outside };
}

function entries(dir: string): string[] {
  return fs.readdirSync(dir).sort();
}

function mkfifo(file: string): void {
  const made = spawnSync('mkfifo', [file]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
}

describe('symlinks: what a path really names decides', () => {
  it('read_file refuses a path through a directory symlink that leaves --dir, and a final symlink to a file outside', async () => {
    const { dir, outside } = dirs();
    fs.symlinkSync('/etc', path.join(dir, 'etc'));
    fs.symlinkSync(outside, path.join(dir, 'out'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'secret.txt'));
    for (const file of ['etc/passwd', 'etc/hostname', 'out/secret.txt', 'secret.txt']) {
      await expect(read(dir, file), file).rejects.toMatchObject({ name: 'PathOutsideError', requested: file });
    }
    await expect(read(dir, 'etc/passwd')).rejects.toThrow(/outside the working directory.*symbolic link "etc"/);
  });

  it('write_file refuses through a symlinked directory that leaves --dir, and creates no directory through it', async () => {
    const { dir, outside } = dirs();
    fs.symlinkSync(outside, path.join(dir, 'out'));
    await expect(write(dir, 'out/x', 'escaped')).rejects.toMatchObject({ name: 'PathOutsideError' });
    await expect(write(dir, 'out/new/deeper/x', 'escaped')).rejects.toMatchObject({ name: 'PathOutsideError' });
    expect(entries(outside)).toEqual(['secret.txt']);
  });

  it('write_file replaces a symlink at the target name instead of writing through it', async () => {
    const { dir, outside } = dirs();
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'notes.txt'));
    await write(dir, 'notes.txt', 'mine\n');
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('the secret\n');
    expect(fs.lstatSync(path.join(dir, 'notes.txt')).isFile()).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('mine\n');
  });

  it('write_file never opens a temp file through a symlink planted at a temp name', async () => {
    const { dir, outside } = dirs();
    // The name the old helper wrote its temp file to: a symlink there sent the content outside.
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, `notes.txt.tmp-${process.pid}`));
    await write(dir, 'notes.txt', 'mine\n');
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('the secret\n');
    expect(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('mine\n');
  });

  it('the run state is out of reach by its name and through any symlink into it', async () => {
    const { dir } = dirs();
    const state = path.join(dir, '.durable-agent');
    fs.mkdirSync(path.join(state, 'archive'), { recursive: true });
    fs.writeFileSync(path.join(state, 'journal.jsonl'), 'the journal\n');
    fs.symlinkSync('.durable-agent', path.join(dir, 'state'));
    fs.symlinkSync(path.join(state, 'archive'), path.join(dir, 'old'));
    fs.symlinkSync('.durable-agent/journal.jsonl', path.join(dir, 'journal.jsonl'));
    for (const file of ['state/journal.jsonl', '.durable-agent/journal.jsonl', 'old/x', 'journal.jsonl']) {
      await expect(read(dir, file), file).rejects.toMatchObject({ name: 'PathOutsideError' });
    }
    for (const file of ['state/journal.jsonl', '.durable-agent/journal.jsonl', 'old/x', 'state/new/x']) {
      await expect(write(dir, file, 'clobbered'), file).rejects.toMatchObject({ name: 'PathOutsideError' });
    }
    await expect(write(dir, 'state/journal.jsonl', 'x')).rejects.toThrow(/\.durable-agent\/ state/);
    expect(fs.readFileSync(path.join(state, 'journal.jsonl'), 'utf8')).toBe('the journal\n');
    expect(entries(state)).toEqual(['archive', 'journal.jsonl']);
    expect(entries(path.join(state, 'archive'))).toEqual([]);
  });

  it('a symlink that stays inside --dir is followed, for reading and writing', async () => {
    const { dir } = dirs();
    fs.mkdirSync(path.join(dir, 'real', 'docs'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'real', 'docs', 'a.md'), 'A\n');
    fs.symlinkSync('real/docs', path.join(dir, 'docs'));
    fs.symlinkSync('real/docs/a.md', path.join(dir, 'a.md'));
    expect(await read(dir, 'docs/a.md')).toBe('A\n');
    expect(await read(dir, 'a.md')).toBe('A\n');
    await write(dir, 'docs/new/b.md', 'B\n');
    expect(fs.readFileSync(path.join(dir, 'real', 'docs', 'new', 'b.md'), 'utf8')).toBe('B\n');
    expect(await verify(dir, 'docs/new/b.md', 'B\n')).toMatchObject({ happened: true });
  });

  it('works when --dir itself is reached through a symlink', async () => {
    const { dir } = dirs();
    const link = path.join(path.dirname(dir), 'link-to-work');
    fs.symlinkSync(dir, link);
    fs.writeFileSync(path.join(dir, 'notes.md'), 'notes\n');
    expect(await read(link, 'notes.md')).toBe('notes\n');
    expect(await read(link, path.join(link, 'notes.md'))).toBe('notes\n');
    await write(link, 'sub/out.md', 'out\n');
    expect(fs.readFileSync(path.join(dir, 'sub', 'out.md'), 'utf8')).toBe('out\n');
    expect((await list(link)).split('\n')).toEqual(['notes.md', 'sub/out.md']);
  });

  it("write_file's verify() resolves the same way and never reads outside", async () => {
    const { dir, outside } = dirs();
    fs.symlinkSync(outside, path.join(dir, 'out'));
    // Were it to read through the symlink, it would find this very content and say the write happened.
    expect(await verify(dir, 'out/secret.txt', 'the secret\n')).toEqual({ happened: false });
    fs.mkdirSync(path.join(dir, '.durable-agent'));
    fs.writeFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'), 'j');
    fs.symlinkSync('.durable-agent', path.join(dir, 'state'));
    expect(await verify(dir, 'state/journal.jsonl', 'j')).toEqual({ happened: false });
  });

  it('checks what was really opened: a file outside, reached by a link swapped in after the check, is refused', async () => {
    const { dir, outside } = dirs();
    fs.writeFileSync(path.join(dir, 'notes.md'), 'notes\n');
    const workdir = new WorkingDirectory(dir);
    const root = await workdir.root();
    // What an open through a just-swapped link would hold: a descriptor on the outside file.
    const swapped = await fs.promises.open(path.join(outside, 'secret.txt'), 'r');
    try {
      await expect(workdir.ensureOpenedInside(root, swapped, path.join(root, 'notes.md'), 'notes.md')).rejects.toMatchObject({ name: 'PathOutsideError' });
    } finally {
      await swapped.close();
    }
    const honest = await fs.promises.open(path.join(root, 'notes.md'), 'r');
    try {
      await expect(workdir.ensureOpenedInside(root, honest, path.join(root, 'notes.md'), 'notes.md')).resolves.toBeUndefined();
    } finally {
      await honest.close();
    }
  });

  it('a refusal is an is_error tool_result that says why; the loop goes on', async () => {
    const { dir } = dirs();
    fs.symlinkSync('/etc', path.join(dir, 'etc'));
    const registry = new ToolRegistry(fileTools(dir));
    const result = await executeCall(registry, 'run_t', { id: 'toolu_1', name: 'read_file', input: { path: 'etc/passwd' } });
    expect(result).toMatchObject({ kind: 'threw', is_error: true });
    expect(result.content).toMatch(/^read_file failed: "etc\/passwd" leads outside the working directory/);
    expect(result.content).not.toContain('root:');
  });
});

describe('list_files', () => {
  it('does not walk out of --dir or into the state through a symlink, and stops at a symlink cycle', async () => {
    const { dir, outside } = dirs();
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(path.join(dir, 'src', 'a.ts'), '');
    fs.writeFileSync(path.join(dir, 'top.md'), '');
    fs.mkdirSync(path.join(dir, '.durable-agent'));
    fs.writeFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'), '');
    fs.symlinkSync('/etc', path.join(dir, 'etc'));
    fs.symlinkSync(outside, path.join(dir, 'out'));
    fs.symlinkSync('.durable-agent', path.join(dir, 'state'));
    fs.symlinkSync('..', path.join(dir, 'src', 'up'));
    fs.symlinkSync('.', path.join(dir, 'here'));
    fs.symlinkSync('src', path.join(dir, 'code'));
    const listed = (await list(dir)).split('\n');
    expect(listed).toEqual([
      'code (symbolic link to the directory "src": not walked; list it by its own path)',
      'etc (symbolic link out of the working directory: not listed)',
      'here (symbolic link to the directory ".": not walked; list it by its own path)',
      'out (symbolic link out of the working directory: not listed)',
      'src/a.ts',
      'src/up (symbolic link to the directory ".": not walked; list it by its own path)',
      'state (symbolic link into .durable-agent/: not listed)',
      'top.md',
    ]);
    for (const file of ['etc', 'out', 'state']) {
      await expect(list(dir, file), file).rejects.toMatchObject({ name: 'PathOutsideError' });
    }
    expect((await list(dir, 'code')).split('\n')).toEqual(['code/a.ts', 'code/up (symbolic link to the directory ".": not walked; list it by its own path)']);
  });

  it('says a file is not a directory', async () => {
    const { dir } = dirs();
    fs.writeFileSync(path.join(dir, 'f.md'), '');
    await expect(list(dir, 'f.md')).rejects.toMatchObject({ name: 'NotADirectoryError' });
  });
});

describe('directories as write targets', () => {
  for (const target of ['.', 'sub', 'sub/', './sub/..']) {
    it(`write_file "${target}" is refused before anything is created, inside --dir or beside it`, async () => {
      const { dir } = dirs();
      fs.mkdirSync(path.join(dir, 'sub'));
      const parentBefore = entries(path.dirname(dir));
      await expect(write(dir, target, 'x')).rejects.toMatchObject({ name: 'NotAFileError', found: 'directory' });
      await expect(write(dir, target, 'x')).rejects.toThrow(/is a directory/);
      expect(entries(path.dirname(dir))).toEqual(parentBefore);
      expect(entries(dir)).toEqual(['sub']);
      expect(entries(path.join(dir, 'sub'))).toEqual([]);
    });
  }

  it('a file in the way of a parent directory is named in the refusal', async () => {
    const { dir } = dirs();
    fs.writeFileSync(path.join(dir, 'f'), '');
    await expect(write(dir, 'f/x.md', 'x')).rejects.toMatchObject({ name: 'NotADirectoryError' });
    expect(entries(dir)).toEqual(['f']);
  });

  it('leaves no temp file behind after a write', async () => {
    const { dir } = dirs();
    await write(dir, 'a/b.md', 'b');
    expect(entries(dir)).toEqual(['a']);
    expect(entries(path.join(dir, 'a'))).toEqual(['b.md']);
  });
});

describe('read_file reads regular files only, and only what it returns', () => {
  it('refuses a FIFO at once, without blocking the event loop', async () => {
    const { dir } = dirs();
    const fifo = path.join(dir, 'pipe');
    mkfifo(fifo);
    // On the old code the read blocks the whole process in open(2) until a writer comes; this
    // writer comes after 2 s, so that code fails instead of hanging forever. Whether the FIFO was
    // ever opened for reading is told by the writer itself, whatever the machine's pace: its own
    // open(2) blocks until a reader comes, so it ends by its time limit (124) only if none did.
    const rescue = spawn('timeout', ['4', 'sh', '-c', `sleep 2; echo rescued > '${fifo}'`], { stdio: 'ignore' });
    const rescueEnded = new Promise<number | null>((resolve) => rescue.on('exit', (code) => resolve(code)));
    try {
      const outcome = await read(dir, 'pipe').then(
        (value) => ({ value }),
        (error: Error) => ({ error }),
      );
      expect(outcome).toMatchObject({ error: { name: 'NotAFileError', found: 'FIFO' } });
      expect((outcome as { error: Error }).error.message).toMatch(/"pipe" is a FIFO, not a regular file/);
      expect(await verify(dir, 'pipe', 'rescued\n')).toEqual({ happened: false });
      expect(await rescueEnded, 'the writer found a reader: the FIFO was opened').toBe(124);
    } finally {
      rescue.kill('SIGKILL');
    }
  });

  it('write_file refuses a FIFO at the target name and leaves it; list_files names it for what it is', async () => {
    const { dir } = dirs();
    mkfifo(path.join(dir, 'pipe'));
    await expect(write(dir, 'pipe', 'x')).rejects.toMatchObject({ name: 'NotAFileError', found: 'FIFO' });
    expect(fs.lstatSync(path.join(dir, 'pipe')).isFIFO()).toBe(true);
    expect(entries(dir)).toEqual(['pipe']);
    expect(await list(dir)).toBe('pipe (FIFO: not a regular file)');
  });

  it('refuses a directory', async () => {
    const { dir } = dirs();
    fs.mkdirSync(path.join(dir, 'sub'));
    await expect(read(dir, 'sub')).rejects.toMatchObject({ name: 'NotAFileError', found: 'directory' });
    await expect(read(dir, '.')).rejects.toMatchObject({ name: 'NotAFileError', found: 'directory' });
  });

  it('returns the first bytes of a 3 GB file with its real size, reading no more (the old read refused files over 2 GB)', async () => {
    const { dir } = dirs();
    const big = path.join(dir, 'big.bin');
    const size = 3 * 1024 ** 3;
    const fd = fs.openSync(big, 'w');
    fs.writeSync(fd, 'head of the file\n');
    fs.ftruncateSync(fd, size); // sparse: no disk used
    fs.closeSync(fd);
    const text = (await read(dir, 'big.bin')) as string;
    expect(text.startsWith('head of the file\n')).toBe(true);
    expect(text).toContain(`(truncated: the file has ${size} bytes; the first ${MAX_READ_BYTES} are shown)`);
    expect(Buffer.byteLength(text)).toBeLessThan(MAX_READ_BYTES + 200);
  });

  it('reads a file of exactly the limit whole, and one byte more as truncated', async () => {
    const { dir } = dirs();
    fs.writeFileSync(path.join(dir, 'exact'), 'a'.repeat(MAX_READ_BYTES));
    fs.writeFileSync(path.join(dir, 'over'), 'a'.repeat(MAX_READ_BYTES + 1));
    expect(await read(dir, 'exact')).toBe('a'.repeat(MAX_READ_BYTES));
    expect(await read(dir, 'over')).toBe(`${'a'.repeat(MAX_READ_BYTES)}\n(truncated: the file has ${MAX_READ_BYTES + 1} bytes; the first ${MAX_READ_BYTES} are shown)`);
  });
});

// ---- through the real CLI ----

const KEY = 'test-only-key-never-store-me-0123456789';
const MODEL = 'claude-test-model';

type ScriptStep = ReturnType<typeof toolUseReply>;

async function serve(script: ScriptStep[], body: (server: FakeAnthropic, url: string) => Promise<void>): Promise<void> {
  const server = new FakeAnthropic((request) => ({ reply: script[assistantTurns(request)]! }));
  const url = await server.start();
  try {
    await body(server, url);
  } finally {
    await server.stop();
  }
}

function toolResults(messages: Message[]): ToolResultBlock[] {
  const last = messages.at(-1)!;
  return (last.content as ContentBlock[]).filter((block): block is ToolResultBlock => block.type === 'tool_result');
}

describe('durable-agent run with hostile paths', () => {
  it.concurrent('write_file state/journal.jsonl through state -> .durable-agent is an is_error result; the journal stays intact and status reads the run', async () => {
    const dir = tempDir();
    fs.symlinkSync('.durable-agent', path.join(dir, 'state'));
    const script = [
      toolUseReply([{ id: 'toolu_w', name: 'write_file', input: { path: 'state/journal.jsonl', content: '{"not":"a journal"}\n' } }]),
      endTurnReply('Done.'),
    ];
    await serve(script, async (server, url) => {
      const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url };
      const run = await runCliAsync(['run', '--task', 'overwrite the journal', '--model', MODEL, '--plain'], { cwd: dir, env });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('[done] Done.');
      const [result] = toolResults(server.requests[1]!.body.messages);
      expect(result).toMatchObject({ tool_use_id: 'toolu_w', is_error: true });
      expect(JSON.stringify(result!.content)).toMatch(/\.durable-agent\/ state/);
      const journal = fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'), 'utf8');
      expect(journal).not.toContain('not":"a journal');

      const status = await runCliAsync(['status', '--json'], { cwd: dir, env });
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ state: 'done', finalText: 'Done.', ledgerEntries: 1 });
      const history = await runCliAsync(['history'], { cwd: dir, env });
      expect(history.code, history.stderr).toBe(0);
    });
  });

  it.concurrent('read_file on a FIFO answers with an error at once; the run finishes and the process is not wedged', async () => {
    const dir = tempDir();
    mkfifo(path.join(dir, 'pipe'));
    const script = [toolUseReply([{ id: 'toolu_r', name: 'read_file', input: { path: 'pipe' } }]), endTurnReply('Could not read it.')];
    await serve(script, async (server, url) => {
      const cli = startCli(['run', '--task', 'read the pipe', '--model', MODEL, '--plain'], {
        cwd: dir,
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url },
      });
      // The old code blocks in read(2) for good, deaf even to SIGTERM: end it here, before the
      // test's own time runs out, and fail on its signal (a killed process has one).
      const guard = setTimeout(() => cli.child.kill('SIGKILL'), 50_000);
      const run = await cli.done;
      clearTimeout(guard);
      expect(run.signal, `wedged; stdout so far: ${run.stdout}`).toBeNull();
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('[done] Could not read it.');
      const [result] = toolResults(server.requests[1]!.body.messages);
      expect(result).toMatchObject({ tool_use_id: 'toolu_r', is_error: true });
      expect(JSON.stringify(result!.content)).toContain('is a FIFO, not a regular file');
    });
  });
});
