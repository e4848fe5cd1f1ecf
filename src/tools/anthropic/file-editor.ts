/**
 * The commands the text editor and the memory tool share (view, create, str_replace, insert;
 * delete and rename for memory), on one working directory. What a path really names is decided
 * by ../working-directory.ts, as for the file tools: this module never judges a path itself.
 * Every edit writes its receipt (./edit-receipts.ts) before it touches anything, so that
 * verify() can tell after a kill whether it was made.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeFileDurablyChecked } from '../../util/durable-file.ts';
import { listTree } from '../file-tools.ts';
import { NotADirectoryError, NotAFileError, PathChangedError, PathNotFoundError, PathOutsideError, STATE_DIR } from '../path-errors.ts';
import type { ToolContext, VerifyAnswer } from '../tool.ts';
import { readAtMost, type WorkingDirectory } from '../working-directory.ts';
import { DestinationExistsError, EmptyOldTextError, FileExistsError, FileTooLargeError, InsertLineError, OldTextNotFoundError, OldTextNotUniqueError, ViewRangeError } from './edit-errors.ts';
import { contentState, type EditReceipt, type EditReceipts, inputHash, type PathState, type ReceiptPath } from './edit-receipts.ts';

/** Files larger than this are not read whole (view, edit): their content would not fit a reply anyway. */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;
/** What view shows at most when the tool sets no max_characters: the first part of a larger file, said so. */
export const DEFAULT_VIEW_CHARACTERS = 200_000;

/** A path as the model gave it (`shown`, for messages) and as the working directory takes it. */
export interface Place {
  shown: string;
  requested: string;
}

export interface EditorSetup {
  workdir: () => Promise<WorkingDirectory>;
  receipts: EditReceipts;
  /** How a path relative to the working directory is shown to the model (the memory tool puts /memories/ before it). */
  show: (relative: string) => string;
  /** The directory as the model knows it, for messages: "the working directory (/tmp/x)", "/memories". */
  area: string;
  maxCharacters: number;
}

/** The sentence a verified edit's result ends with. */
export const MADE_BEFORE_RESUME = 'This edit had already been made before the run was resumed (its receipt and the file agree); it was not made again.';

export class FileEditor {
  constructor(private readonly setup: EditorSetup) {}

  async view(place: Place, range: readonly number[] | undefined): Promise<string> {
    const workdir = await this.setup.workdir();
    const text = await this.worded(place, async () => {
      const content = await this.read(workdir, place).catch(async (error: unknown) => {
        if (error instanceof NotAFileError && error.found === 'directory') return null;
        throw error;
      });
      if (content === null) return this.listing(workdir, place);
      return numbered(place.shown, content, range);
    });
    const limit = this.setup.maxCharacters;
    if (text.length <= limit) return text;
    return `${text.slice(0, limit)}\n(truncated: the first ${limit} of ${text.length} characters are shown; use view_range to see the rest)`;
  }

  async create(place: Place, fileText: string, input: unknown, ctx: ToolContext): Promise<string> {
    const workdir = await this.setup.workdir();
    return this.worded(place, async () => {
      const { root, directory, name } = await workdir.placeForWriting(place.requested);
      if (await lstatOrNull(path.join(directory, name))) throw new FileExistsError(place.shown);
      const result = `File created successfully at: ${place.shown}`;
      await this.commit(ctx, input, [{ path: place.requested, before: 'absent', after: contentState(fileText) }], result, () =>
        writeFileDurablyChecked(path.join(directory, name), fileText, { checkTemp: (handle, tmp) => workdir.ensureOpenedInside(root, handle, tmp, place.requested) }),
      );
      return result;
    });
  }

  async strReplace(place: Place, oldStr: string, newStr: string, input: unknown, ctx: ToolContext): Promise<string> {
    const workdir = await this.setup.workdir();
    return this.worded(place, async () => {
      const content = await this.read(workdir, place);
      if (oldStr === '') throw new EmptyOldTextError(place.shown);
      const starts = occurrences(content, oldStr);
      if (starts.length === 0) throw new OldTextNotFoundError(place.shown);
      if (starts.length > 1) throw new OldTextNotUniqueError(place.shown, starts.map((at) => lineAt(content, at)));
      const at = starts[0]!;
      const edited = content.slice(0, at) + newStr + content.slice(at + oldStr.length);
      const first = lineAt(content, at);
      const last = first + newStr.split('\n').length - 1;
      const result = `The file ${place.shown} has been edited. Here is the snippet showing the change (with line numbers):\n${snippet(edited, first, last)}\nReview the change and edit the file again if needed.`;
      await this.commit(ctx, input, [{ path: place.requested, before: contentState(content), after: contentState(edited) }], result, () => this.write(workdir, place, edited));
      return result;
    });
  }

  async insert(place: Place, insertLine: number, text: string, input: unknown, ctx: ToolContext): Promise<string> {
    const workdir = await this.setup.workdir();
    return this.worded(place, async () => {
      const content = await this.read(workdir, place);
      const lines = linesOf(content);
      if (!Number.isInteger(insertLine) || insertLine < 0 || insertLine > lines.length) throw new InsertLineError(place.shown, insertLine, lines.length);
      // The text becomes whole lines: its own last newline is the one the line ends with.
      const added = (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
      const edited = [...lines.slice(0, insertLine), ...added, ...lines.slice(insertLine)].join('\n') + (content.endsWith('\n') || content === '' ? '\n' : '');
      const result =
        `The file ${place.shown} has been edited: ${added.length === 1 ? 'one line was' : `${added.length} lines were`} inserted ` +
        `${insertLine === 0 ? 'at the top' : `after line ${insertLine}`}. Here is the snippet (with line numbers):\n${snippet(edited, insertLine + 1, insertLine + added.length)}`;
      await this.commit(ctx, input, [{ path: place.requested, before: contentState(content), after: contentState(edited) }], result, () => this.write(workdir, place, edited));
      return result;
    });
  }

  /** A file, or a directory with all it holds. */
  async delete(place: Place, input: unknown, ctx: ToolContext): Promise<string> {
    const workdir = await this.setup.workdir();
    return this.worded(place, async () => {
      const { real, state } = await this.resolveExisting(workdir, place);
      const result = `Successfully deleted ${place.shown}`;
      await this.commit(ctx, input, [{ path: place.requested, before: state, after: 'absent' }], result, () => fs.promises.rm(real, { recursive: true }));
      return result;
    });
  }

  async rename(from: Place, to: Place, input: unknown, ctx: ToolContext): Promise<string> {
    const workdir = await this.setup.workdir();
    const source = await this.worded(from, () => this.resolveExisting(workdir, from));
    return this.worded(to, async () => {
      if ((await this.stateOf(workdir, to)) !== 'absent') throw new DestinationExistsError(to.shown);
      const root = await workdir.root();
      const parts = workdir.components(root, to.requested);
      const directory = await workdir.directory(root, parts.slice(0, -1), to.requested, true);
      const target = path.join(directory, parts[parts.length - 1]!);
      workdir.ensureInside(root, target, to.requested, null);
      const result = `Successfully renamed ${from.shown} to ${to.shown}`;
      const paths: ReceiptPath[] = [
        { path: from.requested, before: source.state, after: 'absent' },
        { path: to.requested, before: 'absent', after: source.state },
      ];
      await this.commit(ctx, input, paths, result, () => fs.promises.rename(source.real, target));
      return result;
    });
  }

  /**
   * Whether this call's edit was made (see ./edit-receipts.ts): no receipt, not begun; every path
   * as after, made; every path as before, not made; anything else, cannot tell.
   */
  async verify(input: unknown, ctx: ToolContext): Promise<VerifyAnswer | undefined> {
    const receipt = await this.setup.receipts.read(ctx.idempotencyKey, input);
    if (!receipt) return { happened: false };
    const workdir = await this.setup.workdir();
    const now = await Promise.all(receipt.paths.map((entry) => this.stateOf(workdir, { shown: entry.path, requested: entry.path })));
    if (receipt.paths.every((entry, i) => now[i] === entry.after)) return { happened: true, result: `${receipt.result}\n(${MADE_BEFORE_RESUME})` };
    if (receipt.paths.every((entry, i) => now[i] === entry.before)) return { happened: false };
    return undefined;
  }

  /** The receipt first, on disk; then the edit. */
  private async commit(ctx: ToolContext, input: unknown, paths: ReceiptPath[], result: string, perform: () => Promise<void>): Promise<void> {
    const receipt: EditReceipt = { input: inputHash(input), paths, result };
    await this.setup.receipts.write(ctx.idempotencyKey, receipt);
    await perform();
  }

  /** The whole text of a regular file (refused past MAX_FILE_BYTES). */
  private async read(workdir: WorkingDirectory, place: Place): Promise<string> {
    const { handle } = await workdir.openForReading(place.requested);
    try {
      const bytes = await readAtMost(handle, MAX_FILE_BYTES + 1);
      if (bytes.length > MAX_FILE_BYTES) throw new FileTooLargeError(place.shown, MAX_FILE_BYTES);
      return bytes.toString('utf8');
    } finally {
      await handle.close();
    }
  }

  private async write(workdir: WorkingDirectory, place: Place, content: string): Promise<void> {
    const { root, directory, name } = await workdir.placeForWriting(place.requested);
    await writeFileDurablyChecked(path.join(directory, name), content, { checkTemp: (handle, tmp) => workdir.ensureOpenedInside(root, handle, tmp, place.requested) });
  }

  private async listing(workdir: WorkingDirectory, place: Place): Promise<string> {
    const lines = await listTree(workdir, place.requested);
    const shown = lines.map((line) => this.setup.show(line));
    return `Here are the files in ${place.shown}${shown.length ? ':' : ': (none)'}\n${shown.join('\n')}`.trimEnd();
  }

  /** What is at the path now, as the working directory resolves it: a file by its content hash. */
  private async stateOf(workdir: WorkingDirectory, place: Place): Promise<PathState> {
    try {
      const { handle } = await workdir.openForReading(place.requested);
      try {
        const hash = createHash('sha256');
        const buffer = Buffer.alloc(64 * 1024);
        for (let position = 0; ; ) {
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
          if (bytesRead === 0) break;
          hash.update(buffer.subarray(0, bytesRead));
          position += bytesRead;
        }
        return `sha256:${hash.digest('hex')}`;
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (error instanceof PathNotFoundError) return 'absent';
      if (error instanceof NotAFileError) return error.found === 'directory' ? 'directory' : 'other';
      throw error;
    }
  }

  /** The real path of an existing file or directory (not the root), and its state. */
  private async resolveExisting(workdir: WorkingDirectory, place: Place): Promise<{ real: string; state: PathState }> {
    const root = await workdir.root();
    const parts = workdir.components(root, place.requested);
    const parent = await workdir.directory(root, parts.slice(0, -1), place.requested, false);
    const real = path.join(parent, parts[parts.length - 1]!);
    workdir.ensureInside(root, real, place.requested, null);
    const state = await this.stateOf(workdir, place);
    if (state === 'absent') throw new PathNotFoundError(place.requested, place.requested);
    return { real, state };
  }

  /** Runs a command; a path error is reworded for this tool's paths (its class and facts kept). */
  private async worded<T>(place: Place, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw reworded(error, place, this.setup);
    }
  }
}

/**
 * The working directory's path errors speak of list_files and of paths relative to it; the
 * model of this tool knows view and its own spelling of the path.
 */
function reworded(error: unknown, place: Place, setup: EditorSetup): unknown {
  const { shown } = place;
  if (error instanceof PathNotFoundError) {
    const missing = error.missing === error.requested ? '' : ` (${setup.show(error.missing)} is missing)`;
    error.message = `The path ${shown} does not exist${missing}. View a directory of ${setup.area} to see what is there.`;
  } else if (error instanceof PathOutsideError) {
    error.message = error.inState
      ? `The path ${shown} leads into ${STATE_DIR}/, the run's own state, which is not for editing: use a path to a file of ${setup.area}.`
      : `The path ${shown} leads outside ${setup.area}${error.symlink === null ? '' : ` through the symbolic link ${setup.show(error.symlink)}`}: use a path inside it.`;
  } else if (error instanceof NotAFileError) {
    error.message =
      error.found === 'directory'
        ? `The path ${shown} is a directory, not a file: give the path of a file (view ${shown} lists what is in it).`
        : `The path ${shown} is a ${error.found}, not a regular file: only regular files are viewed or edited.`;
  } else if (error instanceof NotADirectoryError) {
    error.message = `The path ${shown} goes through ${setup.show(error.component)}, which is a file, not a directory.`;
  } else if (error instanceof PathChangedError) {
    error.message = `The path ${shown} changed while it was being opened (a symbolic link appeared in its place): call the tool again.`;
  }
  return error;
}

/** The file's lines as view shows them, numbered from 1 (a final newline ends the last line; it starts none). */
function numbered(shown: string, content: string, range: readonly number[] | undefined): string {
  const lines = linesOf(content);
  let start = 1;
  let end = lines.length;
  if (range !== undefined) {
    const [from, to] = range as [number, number];
    const valid = range.length === 2 && Number.isInteger(from) && Number.isInteger(to) && from >= 1 && from <= Math.max(lines.length, 1) && (to === -1 || to >= from);
    if (!valid) throw new ViewRangeError(shown, range, lines.length);
    start = from;
    end = to === -1 ? lines.length : Math.min(to, lines.length);
  }
  const body = lines.slice(start - 1, end).map((line, i) => `${String(start + i).padStart(6)}\t${line}`);
  return `Here's the content of ${shown} with line numbers:\n${body.join('\n')}`;
}

function linesOf(content: string): string[] {
  if (content === '') return [];
  return (content.endsWith('\n') ? content.slice(0, -1) : content).split('\n');
}

/** The numbered lines first..last of the content, with up to four lines around them. */
function snippet(content: string, first: number, last: number): string {
  const lines = linesOf(content);
  const from = Math.max(1, first - 4);
  const to = Math.min(lines.length, Math.max(last, first) + 4);
  return lines.slice(from - 1, to).map((line, i) => `${String(from + i).padStart(6)}\t${line}`).join('\n');
}

/** Every start of `needle` in `text`, overlapping ones too ("aa" is twice in "aaa"): a match must be unambiguous. */
function occurrences(text: string, needle: string): number[] {
  const starts: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) starts.push(at);
  return starts;
}

/** The 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line += 1;
  return line;
}

async function lstatOrNull(file: string): Promise<fs.Stats | null> {
  try {
    return await fs.promises.lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
