/**
 * Claude's memory tool (memory_20250818, named memory): files Claude keeps between tasks, every
 * path under /memories, stored in the memories/ folder of the run's directory. Its commands
 * (view, create, str_replace, insert, delete, rename) are the text editor's and two more, and
 * carry the same traits: view is read-only; every other command writes its receipt first and is
 * verified on a resume (./edit-receipts.ts), delete and rename too.
 *
 * /memories/x names memories/x of the directory, and nothing else: a path that climbs out, or a
 * symbolic link that leads out of memories/ (or a memories/ that is a link out of the directory),
 * is refused by the same resolution the file tools use (../working-directory.ts).
 */
import path from 'node:path';
import { STATE_DIR } from '../path-errors.ts';
import { defineTool, type ToolDefinition } from '../tool.ts';
import { WorkingDirectory } from '../working-directory.ts';
import { MemoryPathError, MemoryRootError } from './edit-errors.ts';
import { EditReceipts, RECEIPTS_DIR } from './edit-receipts.ts';
import { DEFAULT_VIEW_CHARACTERS, FileEditor, type Place } from './file-editor.ts';

export const MEMORY_NAME = 'memory';
export const MEMORY_TYPE = 'memory_20250818';
/** The folder of the run's directory that /memories names. */
export const MEMORIES_DIR = 'memories';
const ROOT = '/memories';

export type MemoryInput =
  | { command: 'view'; path: string; view_range?: [number, number] }
  | { command: 'create'; path: string; file_text: string }
  | { command: 'str_replace'; path: string; old_str: string; new_str: string }
  | { command: 'insert'; path: string; insert_line: number; insert_text: string }
  | { command: 'delete'; path: string }
  | { command: 'rename'; old_path: string; new_path: string };

/** The commands and their fields as the SDK's BetaMemoryTool20250818Command types give them. */
export const MEMORY_SCHEMA = {
  type: 'object',
  properties: {
    command: { type: 'string', enum: ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] },
    path: { type: 'string', minLength: 1 },
    view_range: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 },
    file_text: { type: 'string' },
    old_str: { type: 'string' },
    new_str: { type: 'string' },
    insert_line: { type: 'integer', minimum: 0 },
    insert_text: { type: 'string' },
    old_path: { type: 'string', minLength: 1 },
    new_path: { type: 'string', minLength: 1 },
  },
  required: ['command'],
  // biome-ignore-start lint/suspicious/noThenProperty: JSON Schema's if/then keywords, not a thenable
  allOf: [
    { if: { properties: { command: { enum: ['view', 'create', 'str_replace', 'insert', 'delete'] } } }, then: { required: ['path'] } },
    { if: { properties: { command: { const: 'create' } } }, then: { required: ['file_text'] } },
    { if: { properties: { command: { const: 'str_replace' } } }, then: { required: ['old_str', 'new_str'] } },
    { if: { properties: { command: { const: 'insert' } } }, then: { required: ['insert_line', 'insert_text'] } },
    { if: { properties: { command: { const: 'rename' } } }, then: { required: ['old_path', 'new_path'] } },
  ],
  // biome-ignore-end lint/suspicious/noThenProperty: end of the if/then list
} as const;

export function memoryTool(dir: string): ToolDefinition<MemoryInput> {
  const outer = new WorkingDirectory(dir);
  let memories: Promise<WorkingDirectory> | null = null;
  // memories/ is made on first use, and judged like any path of the directory: a link out of it is refused.
  const workdir = () =>
    (memories ??= (async () => {
      const root = await outer.root();
      return new WorkingDirectory(await outer.directory(root, [MEMORIES_DIR], ROOT, true));
    })().catch((error: unknown) => {
      memories = null;
      throw error;
    }));
  const editor = new FileEditor({
    workdir,
    receipts: new EditReceipts(async () => path.join(await outer.root(), STATE_DIR, RECEIPTS_DIR)),
    show: (relative) => (relative === '' || relative === '.' ? ROOT : `${ROOT}/${relative}`),
    area: ROOT,
    maxCharacters: DEFAULT_VIEW_CHARACTERS,
  });
  return defineTool<MemoryInput>({
    name: MEMORY_NAME,
    description: `Claude's memory: files under /memories, kept in ${path.join(outer.given, MEMORIES_DIR)}.`,
    inputSchema: MEMORY_SCHEMA as unknown as Record<string, unknown>,
    anthropicDefined: { type: MEMORY_TYPE },
    readOnly: false,
    readOnlyWhen: (input) => (input as { command?: unknown } | null)?.command === 'view',
    traitSources: { readOnly: 'view is its one read-only command', verify: 'the receipt each change writes first' },
    async run(input, ctx) {
      switch (input.command) {
        case 'view':
          return editor.view(placeOf(input.path), input.view_range);
        case 'create':
          return editor.create(placeOf(input.path), input.file_text, input, ctx);
        case 'str_replace':
          return editor.strReplace(placeOf(input.path), input.old_str, input.new_str, input, ctx);
        case 'insert':
          return editor.insert(placeOf(input.path), input.insert_line, input.insert_text, input, ctx);
        case 'delete':
          return editor.delete(notTheRoot(placeOf(input.path), 'delete'), input, ctx);
        case 'rename':
          return editor.rename(notTheRoot(placeOf(input.old_path), 'rename'), notTheRoot(placeOf(input.new_path), 'rename'), input, ctx);
      }
    },
    verify: (input, ctx) => editor.verify(input, ctx),
  });
}

/** /memories/a/b as the memories folder takes it: a/b (".." is left for the working directory to refuse). */
function placeOf(requested: string): Place {
  if (requested !== ROOT && !requested.startsWith(`${ROOT}/`)) throw new MemoryPathError(requested);
  const relative = requested.slice(ROOT.length).replace(/^\/+/, '');
  return { shown: requested, requested: relative === '' ? '.' : relative };
}

function notTheRoot(place: Place, command: 'delete' | 'rename'): Place {
  if (path.posix.normalize(place.requested) === '.') throw new MemoryRootError(command);
  return place;
}
