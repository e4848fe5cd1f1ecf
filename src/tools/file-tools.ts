/**
 * The tools `durable-agent run` gives a model: read and write files in one directory. Paths are
 * relative to that directory and cannot leave it; the run's own state is out of reach.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileDurably } from '../util/durable-file.ts';
import { defineTool, type ToolDefinition } from './tool.ts';

const STATE_DIR = '.durable-agent';
const MAX_READ_BYTES = 200_000;
const MAX_LISTED = 500;

export class PathOutsideError extends Error {
  override readonly name = 'PathOutsideError';
  constructor(readonly requested: string) {
    super(`"${requested}" is outside the working directory (or inside its ${STATE_DIR}/ state): use a path relative to the working directory.`);
  }
}

export function resolveInside(dir: string, requested: string): string {
  const root = path.resolve(dir);
  const full = path.resolve(root, requested);
  const relative = path.relative(root, full);
  if (relative.startsWith('..') || path.isAbsolute(relative) || relative.split(path.sep)[0] === STATE_DIR) {
    throw new PathOutsideError(requested);
  }
  return full;
}

export function fileTools(dir: string): ToolDefinition[] {
  const listFiles = defineTool<{ path?: string }>({
    name: 'list_files',
    description: 'List the files under a directory of the working directory (default: all of it), one relative path per line.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, additionalProperties: false },
    readOnly: true,
    run({ path: sub = '.' }) {
      const root = resolveInside(dir, sub);
      const found: string[] = [];
      const walk = (current: string) => {
        for (const entry of fs.readdirSync(current, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
          if (found.length >= MAX_LISTED) return;
          const full = path.join(current, entry.name);
          const relative = path.relative(path.resolve(dir), full);
          if (relative === STATE_DIR) continue;
          if (entry.isDirectory()) walk(full);
          else found.push(relative);
        }
      };
      walk(root);
      return found.length ? found.join('\n') + (found.length >= MAX_LISTED ? `\n(first ${MAX_LISTED} files only)` : '') : '(no files)';
    },
  });
  const readFile = defineTool<{ path: string }>({
    name: 'read_file',
    description: 'Read a text file of the working directory.',
    inputSchema: { type: 'object', properties: { path: { type: 'string', minLength: 1 } }, required: ['path'], additionalProperties: false },
    readOnly: true,
    run({ path: requested }) {
      const buffer = fs.readFileSync(resolveInside(dir, requested));
      if (buffer.length <= MAX_READ_BYTES) return buffer.toString('utf8');
      return `${buffer.subarray(0, MAX_READ_BYTES).toString('utf8')}\n(truncated: the file has ${buffer.length} bytes; the first ${MAX_READ_BYTES} are shown)`;
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
    run({ path: requested, content }) {
      const full = resolveInside(dir, requested);
      fs.mkdirSync(path.dirname(full), { recursive: true });
      writeFileDurably(full, content);
      return `Wrote ${Buffer.byteLength(content)} bytes to ${requested}.`;
    },
    verify({ path: requested, content }) {
      let current: string;
      try {
        current = fs.readFileSync(resolveInside(dir, requested), 'utf8');
      } catch {
        return { happened: false };
      }
      return current === content
        ? { happened: true, result: `${requested} already holds this content (written before the resume; not written again).` }
        : { happened: false };
    },
  });
  return [listFiles, readFile, writeFile];
}
