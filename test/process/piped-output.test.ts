/**
 * A command's output through a pipe is the output it writes to a file, whole: the process does
 * not leave while its output is still queued, however slowly the reader reads. A reader that goes
 * away early (`| head -c 100`) ends nothing loudly: no stack trace.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { BIN, cliEnv } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** A tool result well past a pipe's buffer (64 KiB), so the output is too. */
const BIG_RESULT_LINES = 30_000;

const dump = defineTool({
  name: 'dump_table',
  description: 'prints a big table',
  inputSchema: { type: 'object', properties: {} },
  readOnly: true,
  run: () => Array.from({ length: BIG_RESULT_LINES }, (_, i) => `row ${i}: ${'x'.repeat(40)}`).join('\n'),
});

const dir = tempDir();

beforeAll(async () => {
  const store = new FileStore(path.join(dir, '.durable-agent'));
  const model = scriptedModel([toolUseReply([{ id: 'toolu_01', name: 'dump_table', input: {} }], 'Dumping.'), endTurnReply('Dumped.')]);
  const result = await startRun({ store, model, tools: [dump], task: 'Dump the table.', maxTurns: 3 });
  expect(result.status).toBe('done');
});

interface Ended {
  code: number | null;
  stderr: string;
}

/** The command with its stdout written to a file: the bytes it means to print. */
async function toFile(args: string[]): Promise<{ bytes: Buffer } & Ended> {
  const file = path.join(tempDir(), 'out');
  const fd = fs.openSync(file, 'w');
  try {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: cliEnv(), stdio: ['ignore', fd, 'pipe'] });
    const ended = await endOf(child);
    return { ...ended, bytes: fs.readFileSync(file) };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The command through a pipe whose reader does not read until the command has exited, or has
 * had a second to: a process that leaves with its output queued has left by then.
 */
async function throughSlowPipe(args: string[]): Promise<{ bytes: Buffer } & Ended> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk)).pause();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 1000))]);
  child.stdout.resume();
  const ended = await endOf(child);
  return { ...ended, bytes: Buffer.concat(chunks) };
}

function endOf(child: ReturnType<typeof spawn>): Promise<Ended> {
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

describe('a big output through a pipe', () => {
  it('history --transcript --full: the bytes a file gets, to the last', async () => {
    const args = ['history', '--transcript', '--full'];
    const file = await toFile(args);
    expect(file.code, file.stderr).toBe(0);
    expect(file.bytes.length).toBeGreaterThan(1024 * 1024);
    const piped = await throughSlowPipe(args);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.bytes.length).toBe(file.bytes.length);
    expect(piped.bytes.equals(file.bytes)).toBe(true);
  });

  it('history --transcript --json: the JSON parses', async () => {
    const piped = await throughSlowPipe(['history', '--transcript', '--json']);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.bytes.length).toBeGreaterThan(1024 * 1024);
    const transcript = JSON.parse(piped.bytes.toString('utf8')) as { entries: { kind: string }[] };
    expect(transcript.entries.some((entry) => entry.kind === 'tool-result')).toBe(true);
  });
});

describe('a reader that goes away', () => {
  it('after 100 bytes: the command ends quietly, with its usual code', async () => {
    const child = spawn(process.execPath, [BIN, 'history', '--transcript', '--full'], { cwd: dir, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const ended = endOf(child);
    let read = 0;
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= 100) {
          child.stdout.destroy();
          resolve();
        }
      });
    });
    const { code, stderr } = await ended;
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('before a byte is read: the same', async () => {
    const child = spawn(process.execPath, [BIN, 'history', '--transcript', '--full'], { cwd: dir, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    const { code, stderr } = await endOf(child);
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
