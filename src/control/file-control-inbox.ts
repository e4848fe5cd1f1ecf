/**
 * The file store's control inbox: DIR/.durable-agent/control/<kind>.json (cancel.json,
 * pause.json). Written like a decision (src/approval/file-decision-inbox.ts), by
 * createFileExclusively: a second request of the same kind is refused, not written over, and a
 * process killed at any instant leaves no request or a whole one. The run's writer reads it at
 * every step boundary: one readdir when empty.
 */
import fs from 'node:fs';
import path from 'node:path';
import { environmentProblem } from '../store/fs-problems.ts';
import { createFileExclusively, fsyncDir } from '../util/durable-file.ts';
import { CONTROL_KINDS, type ControlInbox, type ControlKind, type ControlRequest, controlProblem } from './control-request.ts';

export const CONTROL_DIR = 'control';
const FORMAT = 'durable-agent/control';
const VERSION = 1;

/** Test-only: where a request's write may be stopped, to check what a kill there leaves. */
export type ControlPoint = 'control-temp' | 'control-link';
export const CONTROL_POINTS: readonly ControlPoint[] = ['control-temp', 'control-link'];

export interface FileControlInboxOptions {
  /** Test-only: called as the write passes a point (a test kills the process there). */
  onPoint?: ((point: ControlPoint) => void) | undefined;
  /** Test-only: the write fails half-way with ENOSPC when this returns true (a full disk). */
  failWrite?: (() => boolean) | undefined;
}

export class FileControlInbox implements ControlInbox {
  readonly dir: string;

  constructor(
    stateDir: string,
    private readonly options: FileControlInboxOptions = {},
  ) {
    this.dir = path.join(stateDir, CONTROL_DIR);
  }

  fileOf(kind: ControlKind): string {
    return path.join(this.dir, `${kind}.json`);
  }

  async write(request: ControlRequest): Promise<'written' | 'exists'> {
    const file = this.fileOf(request.kind);
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      return createFileExclusively(file, `${JSON.stringify({ format: FORMAT, version: VERSION, request })}\n`, {
        onPoint: (point) => this.options.onPoint?.(`control-${point}`),
        failWrite: this.options.failWrite,
        faultPoint: 'control-write',
      });
    } catch (error) {
      throw environmentProblem(error, `write the ${request.kind} request ${file}`, file) ?? error;
    }
  }

  async read(): Promise<ControlRequest[]> {
    let names: string[];
    try {
      // A stat that does not throw: no error object is built for the usual "no request ever made".
      if (!fs.statSync(this.dir, { throwIfNoEntry: false })) return [];
      names = fs.readdirSync(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw environmentProblem(error, `read the control requests in ${this.dir}`, this.dir) ?? error;
    }
    const requests: ControlRequest[] = [];
    for (const kind of CONTROL_KINDS) {
      if (!names.includes(`${kind}.json`)) continue;
      const request = this.get(kind);
      if (request) requests.push(request);
    }
    return requests;
  }

  /** The request of this kind; null when there is none or it is not a whole one (a hand-made file). */
  get(kind: ControlKind): ControlRequest | null {
    let text: string;
    try {
      text = fs.readFileSync(this.fileOf(kind), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw environmentProblem(error, `read the ${kind} request ${this.fileOf(kind)}`, this.fileOf(kind)) ?? error;
    }
    try {
      const envelope = JSON.parse(text) as { format?: unknown; version?: unknown; request?: unknown };
      if (envelope?.format !== FORMAT || envelope.version !== VERSION) return null;
      const request = envelope.request as ControlRequest;
      return controlProblem(request) === null && request.kind === kind ? request : null;
    } catch {
      return null;
    }
  }

  async settle(kind: ControlKind): Promise<void> {
    const file = this.fileOf(kind);
    try {
      fs.rmSync(file, { force: true });
      if (fs.existsSync(this.dir)) fsyncDir(this.dir);
    } catch (error) {
      throw environmentProblem(error, `remove the ${kind} request ${file}`, file) ?? error;
    }
  }
}
