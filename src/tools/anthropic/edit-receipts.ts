/**
 * Why an edit can be verified after a kill. A file's content alone cannot always say whether an
 * edit was made: a str_replace that keeps its anchor ("foo()" → "foo()\nbar()") leaves the old
 * text in place once made, and an insert of a line like its neighbours looks the same made or
 * not. So before it touches a file, an edit writes a receipt, durably, under its call's
 * idempotency key: the state of each path it changes before and after (a content hash, a
 * directory, or nothing there), and the result it will give. A resume's verify() then reads
 * the receipt and looks at the paths:
 * - no receipt: the edit had not begun (the receipt is on disk before the file is touched);
 * - every path as the receipt's "after" says: it happened, and the model gets the result it
 *   would have got, with a sentence saying so;
 * - every path as "before": it had not happened, and the resume makes it once;
 * - anything else (the file changed since, by someone else): it cannot tell (undefined), and
 *   the model is told the state is unknown rather than have the edit made on top of a guess.
 * Receipts live in the run directory's .durable-agent/edit-receipts/, out of the file tools'
 * and the editor's reach, one small file per edit.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fsyncDir, writeFileDurablyChecked } from '../../util/durable-file.ts';
import { canonicalJson } from '../schema-hash.ts';

/** What is at a path: nothing, a directory, or a file of this content (its SHA-256). */
export type PathState = 'absent' | 'directory' | `sha256:${string}` | 'other';

export interface ReceiptPath {
  /** The path as the tool's working directory takes it. */
  path: string;
  before: PathState;
  after: PathState;
}

export interface EditReceipt {
  /** The SHA-256 of the call's input: a receipt of another call under the same key is no receipt. */
  input: string;
  paths: ReceiptPath[];
  /** What the edit gives the model. */
  result: string;
}

export const RECEIPTS_DIR = 'edit-receipts';

export function contentState(content: string | Buffer): PathState {
  return `sha256:${createHash('sha256').update(content).digest('hex')}`;
}

export function inputHash(input: unknown): string {
  return createHash('sha256').update(canonicalJson(input)).digest('hex');
}

export class EditReceipts {
  private made = false;

  /** `dir`: where the receipts go, resolved when the first edit needs it. */
  constructor(private readonly dir: () => Promise<string>) {}

  /** On disk (fsynced, its directory too) before it resolves. */
  async write(key: string, receipt: EditReceipt): Promise<void> {
    const dir = await this.dir();
    if (!this.made) {
      const created = await fs.promises.mkdir(dir, { recursive: true });
      // A directory just made is durable only once its parent's entry for it is.
      if (created !== undefined) for (let d = dir; d.length >= created.length; d = path.dirname(d)) fsyncDir(path.dirname(d));
      this.made = true;
    }
    await writeFileDurablyChecked(path.join(dir, `${key}.json`), JSON.stringify(receipt), { checkTemp: async () => {} });
  }

  /** The receipt of this call, or null when the call wrote none (or another call's input is under its key). */
  async read(key: string, input: unknown): Promise<EditReceipt | null> {
    let text: string;
    try {
      text = await fs.promises.readFile(path.join(await this.dir(), `${key}.json`), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const receipt = JSON.parse(text) as EditReceipt;
    return receipt.input === inputHash(input) ? receipt : null;
  }
}
