/**
 * Resume measured in fresh child processes (each its own peak RSS): the resume of a killed run,
 * and, on the same journal, a process that only reads it and JSON.parses every record.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChildMeasure } from './resume-child.ts';

const CHILD = fileURLToPath(new URL('./resume-child.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

export type ChildMode = 'resume' | 'read-parse';

export function measureInChild(mode: ChildMode, target: string): ChildMeasure {
  const stdout = execFileSync(process.execPath, ['--import', TSX, CHILD, mode, target], { encoding: 'utf8' });
  return JSON.parse(stdout.trim().split('\n').pop()!) as ChildMeasure;
}

/** To check that the measurements left the journal exactly as it was. */
export function digestOf(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}
