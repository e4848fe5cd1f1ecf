/** The command's entry runs the build in dist/; without one it says how to make it, not a resolution stack trace. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { BIN, cliEnv } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

it('without dist/, the command says to build it', () => {
  const checkout = tempDir();
  fs.mkdirSync(path.join(checkout, 'bin'));
  fs.copyFileSync(BIN, path.join(checkout, 'bin', 'durable-agent.mjs'));
  const run = spawnSync(process.execPath, [path.join(checkout, 'bin', 'durable-agent.mjs'), '--help'], { encoding: 'utf8', env: cliEnv() });
  expect(run.status).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toBe("durable-agent: the compiled CLI (dist/) is missing: run `npm run build` in the package's directory.\n");
});
