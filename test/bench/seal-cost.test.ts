/**
 * The seal-cost benchmark runs, on a real turn of the runtime's records, and prints each figure
 * with its ratio (tiny counts here: the figures themselves are not judged, machine speed must not
 * decide a verdict).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { REPO } from '../helpers/cli.ts';

const SCRIPT = fileURLToPath(new URL('../../bench/seal-cost.ts', import.meta.url));

it('prints the cost of a turn plain and sealed, both ways and with a durable write, and the bytes', () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', SCRIPT, '--turns', '3', '--rounds', '1', '--syncs', '10'], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
  expect(out).toContain('A turn of 4 records (MODEL_USAGE, MODEL_REPLY, TOOL_RESULT, CLOSE_TURN), a 2048-byte tool result');
  for (const row of ['write: encode (JSON + CRC)', 'read: parse', 'both ways', 'write + fdatasync per record', 'durable write + the codec both ways', 'bytes per turn']) {
    expect(out).toMatch(new RegExp(`${row.replace(/[()+]/g, '\\$&')}.*\\d+\\.\\d\\dx`));
  }
}, 180_000);
