/**
 * Claude's text editor (text_editor_20250728, named str_replace_based_edit_tool), run here on the
 * files of one directory. That version is the one for the Claude 4 models and later: the same
 * commands as text_editor_20250429 (view, create, str_replace, insert; no undo_edit) plus
 * max_characters, which caps what view shows. (text_editor_20250124, str_replace_editor, is Claude
 * Sonnet 3.7's, with undo_edit.) The API knows the tool's description and schema; the schema
 * here checks the input before a command runs and is pinned with the run.
 *
 * On a resume: view is read-only and simply runs again; create, str_replace and insert are side
 * effects that verify() settles from their receipts (./edit-receipts.ts), so an edit a kill
 * interrupted is made once, never twice.
 */
import path from 'node:path';
import { STATE_DIR } from '../path-errors.ts';
import { defineTool, type ToolDefinition } from '../tool.ts';
import { WorkingDirectory } from '../working-directory.ts';
import { EditReceipts, RECEIPTS_DIR } from './edit-receipts.ts';
import { DEFAULT_VIEW_CHARACTERS, FileEditor, type Place } from './file-editor.ts';

export const TEXT_EDITOR_NAME = 'str_replace_based_edit_tool';
export const TEXT_EDITOR_TYPE = 'text_editor_20250728';

export interface TextEditorOptions {
  /** max_characters: view shows at most this much of a file (sent to the API, which tells Claude). Default: 200000, not sent. */
  maxCharacters?: number | undefined;
}

export type TextEditorInput =
  | { command: 'view'; path: string; view_range?: [number, number] }
  | { command: 'create'; path: string; file_text: string }
  | { command: 'str_replace'; path: string; old_str: string; new_str?: string }
  | { command: 'insert'; path: string; insert_line: number; insert_text: string };

/** What each command needs besides its path, as the API's documentation gives the commands. */
export const TEXT_EDITOR_SCHEMA = {
  type: 'object',
  properties: {
    command: { type: 'string', enum: ['view', 'create', 'str_replace', 'insert'] },
    path: { type: 'string', minLength: 1 },
    view_range: { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 },
    file_text: { type: 'string' },
    old_str: { type: 'string' },
    new_str: { type: 'string' },
    insert_line: { type: 'integer', minimum: 0 },
    insert_text: { type: 'string' },
  },
  required: ['command', 'path'],
  // biome-ignore-start lint/suspicious/noThenProperty: JSON Schema's if/then keywords, not a thenable
  allOf: [
    { if: { properties: { command: { const: 'create' } } }, then: { required: ['file_text'] } },
    { if: { properties: { command: { const: 'str_replace' } } }, then: { required: ['old_str'] } },
    { if: { properties: { command: { const: 'insert' } } }, then: { required: ['insert_line', 'insert_text'] } },
  ],
  // biome-ignore-end lint/suspicious/noThenProperty: end of the if/then list
} as const;

/** `view` only: every other command changes a file. */
export function isViewCommand(input: unknown): boolean {
  return (input as { command?: unknown } | null)?.command === 'view';
}

export function textEditorTool(dir: string, options: TextEditorOptions = {}): ToolDefinition<TextEditorInput> {
  const workdir = new WorkingDirectory(dir);
  const editor = new FileEditor({
    workdir: async () => workdir,
    receipts: new EditReceipts(async () => path.join(await workdir.root(), STATE_DIR, RECEIPTS_DIR)),
    show: (relative) => relative,
    area: `the working directory (${workdir.given})`,
    maxCharacters: options.maxCharacters ?? DEFAULT_VIEW_CHARACTERS,
  });
  const place = (input: TextEditorInput): Place => ({ shown: input.path, requested: input.path });
  return defineTool<TextEditorInput>({
    name: TEXT_EDITOR_NAME,
    description: `Claude's text editor on the files of ${workdir.given}: view, create, str_replace, insert.`,
    inputSchema: TEXT_EDITOR_SCHEMA as unknown as Record<string, unknown>,
    anthropicDefined: { type: TEXT_EDITOR_TYPE, ...(options.maxCharacters === undefined ? {} : { options: { max_characters: options.maxCharacters } }) },
    readOnly: false,
    readOnlyWhen: isViewCommand,
    traitSources: { readOnly: 'view is its one read-only command', verify: 'the receipt each edit writes first' },
    async run(input, ctx) {
      switch (input.command) {
        case 'view':
          return editor.view(place(input), input.view_range);
        case 'create':
          return editor.create(place(input), input.file_text, input, ctx);
        case 'str_replace':
          return editor.strReplace(place(input), input.old_str, input.new_str ?? '', input, ctx);
        case 'insert':
          return editor.insert(place(input), input.insert_line, input.insert_text, input, ctx);
      }
    },
    verify: (input, ctx) => editor.verify(input, ctx),
  });
}
