/**
 * The tools `durable-agent run` gives a model: read and write files in one directory. What a path
 * really names decides (./working-directory.ts): symlinks may not lead out of the directory or
 * into its `.durable-agent/` state, only regular files are read or written, and a read costs
 * what it returns.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileDurablyChecked } from '../util/durable-file.ts';
import { STATE_DIR } from './path-errors.ts';
import { defineTool, type ToolDefinition } from './tool.ts';
import { kindOf, readAtMost, WorkingDirectory } from './working-directory.ts';

export { NotADirectoryError, NotAFileError, PathChangedError, PathNotFoundError, PathOutsideError } from './path-errors.ts';

const MAX_READ_BYTES = 200_000;
const MAX_LISTED = 500;

export function fileTools(dir: string): ToolDefinition[] {
  const workdir = new WorkingDirectory(dir);
  const listFiles = defineTool<{ path?: string }>({
    name: 'list_files',
    description:
      'List the files under a directory of the working directory (default: all of it), one relative path per line. Symbolic links to directories are not walked: list them by their own path.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, additionalProperties: false },
    readOnly: true,
    async run({ path: sub = '.' }) {
      const lines = await listTree(workdir, sub);
      if (!lines.length) return '(no files)';
      return lines.join('\n') + (lines.length >= MAX_LISTED ? `\n(first ${MAX_LISTED} entries only)` : '');
    },
  });
  const readFile = defineTool<{ path: string }>({
    name: 'read_file',
    description: `Read a text file of the working directory (regular files only; the first ${MAX_READ_BYTES} bytes of a larger one).`,
    inputSchema: { type: 'object', properties: { path: { type: 'string', minLength: 1 } }, required: ['path'], additionalProperties: false },
    readOnly: true,
    async run({ path: requested }) {
      const { handle, size } = await workdir.openForReading(requested);
      let head: Buffer;
      try {
        // One byte more than is shown: says whether the file goes on, even if it grew since fstat.
        head = await readAtMost(handle, MAX_READ_BYTES + 1);
      } finally {
        await handle.close();
      }
      if (head.length <= MAX_READ_BYTES) return head.toString('utf8');
      const total = Math.max(size, head.length);
      return `${head.subarray(0, MAX_READ_BYTES).toString('utf8')}\n(truncated: the file has ${total} bytes; the first ${MAX_READ_BYTES} are shown)`;
    },
  });
  const writeFile = defineTool<{ path: string; content: string }>({
    name: 'write_file',
    description: 'Write a text file in the working directory, replacing it if it exists (directories are created).',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 }, content: { type: 'string' } },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    readOnly: false,
    async run({ path: requested, content }) {
      const { root, directory, name } = await workdir.placeForWriting(requested);
      await writeFileDurablyChecked(path.join(directory, name), content, {
        checkTemp: (handle, tmp) => workdir.ensureOpenedInside(root, handle, tmp, requested),
      });
      return `Wrote ${Buffer.byteLength(content)} bytes to ${requested}.`;
    },
    async verify({ path: requested, content }) {
      const expected = Buffer.from(content, 'utf8');
      let current: Buffer;
      try {
        // The same resolution as a read: a path that leads outside or is no regular file was never written.
        const { handle } = await workdir.openForReading(requested);
        try {
          current = await readAtMost(handle, expected.length + 1);
        } finally {
          await handle.close();
        }
      } catch {
        return { happened: false };
      }
      return current.equals(expected)
        ? { happened: true, result: `${requested} already holds this content (written before the resume; not written again).` }
        : { happened: false };
    },
  });
  return [listFiles, readFile, writeFile];
}

/**
 * The files under a directory, as paths relative to the working directory. Symlinks are not
 * walked (no way out, no cycle): one to a file inside is listed as a file, any other gets a line
 * that says what it is.
 */
export async function listTree(workdir: WorkingDirectory, requested: string): Promise<string[]> {
  const root = await workdir.root();
  const parts = workdir.components(root, requested);
  const start = await workdir.directory(root, parts, requested, false);
  const lines: string[] = [];
  const walked = new Set<string>();
  const walk = async (real: string, shown: string): Promise<void> => {
    // Real directories form a tree; this only guards against a bind mount that loops.
    const { dev, ino } = await fs.promises.stat(real);
    if (walked.has(`${dev}:${ino}`)) return;
    walked.add(`${dev}:${ino}`);
    const entries = (await fs.promises.readdir(real, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (lines.length >= MAX_LISTED) return;
      const full = path.join(real, entry.name);
      const relative = shown ? `${shown}/${entry.name}` : entry.name;
      if (path.relative(root, full).toLowerCase() === STATE_DIR) continue;
      if (entry.isDirectory()) await walk(full, relative);
      else if (entry.isFile()) lines.push(relative);
      else if (entry.isSymbolicLink()) lines.push(await describeLink(workdir, root, full, relative));
      else lines.push(`${relative} (${kindOf(await fs.promises.lstat(full))}: not a regular file)`);
    }
  };
  await walk(start, parts.join('/'));
  return lines;
}

async function describeLink(workdir: WorkingDirectory, root: string, link: string, shown: string): Promise<string> {
  const target = await workdir.linkTarget(root, link);
  switch (target.kind) {
    case 'outside':
      return `${shown} (symbolic link out of the working directory: not listed)`;
    case 'state':
      return `${shown} (symbolic link into ${STATE_DIR}/: not listed)`;
    case 'dangling':
      return `${shown} (symbolic link to nothing)`;
    case 'inside': {
      if (target.stat.isFile()) return shown;
      const to = path.relative(root, target.real) || '.';
      if (target.stat.isDirectory()) return `${shown} (symbolic link to the directory "${to}": not walked; list it by its own path)`;
      return `${shown} (symbolic link to a ${kindOf(target.stat)}: not a regular file)`;
    }
  }
}
