/**
 * The file store's inbox of decisions: `DIR/.durable-agent/decisions/<tool_use_id>.json`.
 *
 * Only the run's writer writes its journal; a decision given from another process (approve,
 * deny, answer) is written here, and the writer turns it into a DECISION record. So that a
 * decision is never half there and never given twice:
 * - a file is created whole: written and fsynced under a temporary name, then linked to its
 *   name (link fails if the name exists: a second decision is refused, not written over), then
 *   the directory is fsynced. A process killed at any instant leaves no decision or a whole one
 *   (and perhaps a temporary file, which no reader takes for a decision);
 * - the writer removes the file only once the DECISION record is durable; a file for a call
 *   that is already decided is one a writer died before removing, and is ignored.
 *
 * A tool_use_id becomes a file name, so it is checked first: the API's ids are `toolu_…`, and
 * anything with other characters (a path separator, a dot) is refused before any path is made.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Decision, Verdict } from '../../machines/agent-loop.types.ts';
import { environmentProblem } from '../store/fs-problems.ts';
import { BadCallIdError, DecisionExistsError, InboxFileError } from './decision-errors.ts';
import type { DecisionInbox } from '../store/store.ts';
import { createFileExclusively, fsyncDir } from '../util/durable-file.ts';

export const DECISIONS_DIR = 'decisions';
const FORMAT = 'durable-agent/decision';
const VERSION = 1;
const VERDICTS: readonly Verdict[] = ['approved', 'denied', 'answered'];
const NAME = /^[A-Za-z0-9_-]{1,128}$/;
const FILE = /^([A-Za-z0-9_-]{1,128})\.json$/;

/** Test-only: where a decision's write may be stopped, to check what a kill there leaves. */
export type InboxPoint = 'decision-temp' | 'decision-link';

export { BadCallIdError, DecisionExistsError, InboxFileError } from './decision-errors.ts';

export function isCallId(id: unknown): id is string {
  return typeof id === 'string' && NAME.test(id);
}

export interface FileDecisionInboxOptions {
  /** Test-only: called as the write passes a point (a test kills the process there). */
  onPoint?: ((point: InboxPoint) => void) | undefined;
  /** Test-only: the write fails half-way with ENOSPC when this returns true (a full disk). */
  failWrite?: (() => boolean) | undefined;
}

export class FileDecisionInbox implements DecisionInbox {
  /** `stateDir` is the run's DIR/.durable-agent. */
  readonly dir: string;

  constructor(
    stateDir: string,
    private readonly options: FileDecisionInboxOptions = {},
  ) {
    this.dir = path.join(stateDir, DECISIONS_DIR);
  }

  fileOf(tool_use_id: string): string {
    if (!isCallId(tool_use_id)) throw new BadCallIdError(String(tool_use_id));
    return path.join(this.dir, `${tool_use_id}.json`);
  }

  /**
   * Writes the decision whole and exclusively, durable when it resolves: 'exists' (nothing
   * written) when the call has a decision already.
   */
  async write(decision: Decision): Promise<'written' | 'exists'> {
    try {
      await this.put(decision);
      return 'written';
    } catch (error) {
      if (error instanceof DecisionExistsError) return 'exists';
      throw error;
    }
  }

  /** Every decision in the inbox, oldest first; a file that is not a whole decision is left out (get() says what is wrong with it). */
  async read(): Promise<Decision[]> {
    return this.list({ skipDamaged: true });
  }

  /** Removes the call's decision once its DECISION record is durable. */
  async settle(tool_use_id: string): Promise<void> {
    await this.remove(tool_use_id);
  }

  /** write(), throwing DecisionExistsError when the call has a decision already. */
  async put(decision: Decision): Promise<void> {
    const file = this.fileOf(decision.tool_use_id);
    let written: 'written' | 'exists';
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      this.sweepTemps(decision.tool_use_id);
      written = createFileExclusively(file, `${JSON.stringify({ format: FORMAT, version: VERSION, decision })}\n`, {
        onPoint: (point) => this.options.onPoint?.(`decision-${point}`),
        failWrite: this.options.failWrite,
        faultPoint: 'decision-write',
      });
    } catch (error) {
      throw environmentProblem(error, `write the decision ${file}`, file) ?? error;
    }
    // A decision is there already, and stays as it is.
    if (written === 'exists') throw new DecisionExistsError(decision.tool_use_id, file);
  }

  /** The decision waiting for this call, or null. */
  async get(tool_use_id: string): Promise<Decision | null> {
    const file = this.fileOf(tool_use_id);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw environmentProblem(error, `read the decision ${file}`, file) ?? error;
    }
    return decisionOf(file, tool_use_id, text);
  }

  /** Every decision in the inbox, oldest first. Temporary files (a write cut short) are not decisions. */
  async list(options: { skipDamaged?: boolean } = {}): Promise<Decision[]> {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw environmentProblem(error, `read the decisions in ${this.dir}`, this.dir) ?? error;
    }
    const decisions: Decision[] = [];
    for (const name of names.sort()) {
      const id = FILE.exec(name)?.[1];
      if (id === undefined) continue;
      try {
        const decision = await this.get(id);
        if (decision) decisions.push(decision);
      } catch (error) {
        if (!(options.skipDamaged && error instanceof InboxFileError)) throw error;
      }
    }
    return decisions.sort((a, b) => a.at - b.at);
  }

  /**
   * Removes the call's decision (the writer does it once the DECISION record is durable, or
   * for a call already decided), durably: a crash after it cannot bring the file back.
   */
  async remove(tool_use_id: string): Promise<void> {
    const file = this.fileOf(tool_use_id);
    try {
      fs.rmSync(file, { force: true });
      this.sweepTemps(tool_use_id);
      if (fs.existsSync(this.dir)) fsyncDir(this.dir);
    } catch (error) {
      throw environmentProblem(error, `remove the decision ${file}`, file) ?? error;
    }
  }

  /** Temporary files of this call left by a writer that was killed (its process is gone). */
  private sweepTemps(tool_use_id: string): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return;
    }
    const prefix = `${tool_use_id}.json.tmp-`;
    for (const name of names) {
      if (!name.startsWith(prefix)) continue;
      const pid = Number(name.slice(prefix.length).split('-')[0]);
      if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) fs.rmSync(path.join(this.dir, name), { force: true });
    }
  }
}

function decisionOf(file: string, tool_use_id: string, text: string): Decision {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InboxFileError(file, `not JSON: ${(error as Error).message}`);
  }
  const envelope = parsed as { format?: unknown; version?: unknown; decision?: Partial<Decision> } | null;
  if (envelope?.format !== FORMAT) throw new InboxFileError(file, `its format is not ${FORMAT}`);
  if (envelope.version !== VERSION) throw new InboxFileError(file, `version ${String(envelope.version)}; this version reads ${VERSION}`);
  const decision = envelope.decision;
  if (!decision || typeof decision !== 'object') throw new InboxFileError(file, 'it holds no decision');
  if (decision.tool_use_id !== tool_use_id) throw new InboxFileError(file, `it is about ${String(decision.tool_use_id)}, not ${tool_use_id}`);
  if (!VERDICTS.includes(decision.verdict as Verdict)) throw new InboxFileError(file, `its verdict is ${String(decision.verdict)}`);
  if (typeof decision.by !== 'string' || !Number.isFinite(decision.at)) throw new InboxFileError(file, 'it does not say who decided and when');
  for (const field of ['note', 'reason', 'text'] as const) {
    if (decision[field] !== undefined && typeof decision[field] !== 'string') throw new InboxFileError(file, `its ${field} is not text`);
  }
  if (decision.verdict === 'denied' && typeof decision.reason !== 'string') throw new InboxFileError(file, 'a denial without a reason');
  if (decision.verdict === 'answered' && typeof decision.text !== 'string') throw new InboxFileError(file, 'an answer without text');
  return decision as Decision;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
