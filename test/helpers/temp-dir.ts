import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

/**
 * A fresh directory under the system temp dir. Removed when the test file is done (not after
 * each test: tests that run concurrently would remove each other's directories).
 */
export function tempDir(prefix = 'da-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

// A scratch project holds a node_modules of thousands of files: on a busy machine removing it
// takes more than the default minute of a hook, and a verdict must not depend on how busy it is.
afterAll(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}, 300_000);
