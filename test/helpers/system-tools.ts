/**
 * Tests that drive a system program (a PostgreSQL server, Debian's chromium, tmux, strace) need it
 * installed; .ci/run installs them and sets DURABLE_AGENT_REQUIRE_SYSTEM_TOOLS=1, so in CI a
 * missing one fails the run. Elsewhere (a fresh machine with only Node and npm) those tests
 * are reported as skipped, with what to install, rather than failing for want of a package.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

export function onPath(program: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).status === 0;
}

export function systemToolPresent(name: string, present: boolean, install: string): boolean {
  if (present) return true;
  if (process.env.DURABLE_AGENT_REQUIRE_SYSTEM_TOOLS) {
    throw new Error(`${name} is required by these tests but is not installed (${install}).`);
  }
  console.warn(`[${name}] SKIPPED: the tests that drive ${name} need it installed (${install}); .ci/run installs it and runs them.`);
  return false;
}

export const chromiumPresent = () => systemToolPresent('chromium', fs.existsSync('/usr/bin/chromium'), 'apt-get install chromium');
export const tmuxPresent = () => systemToolPresent('tmux', onPath('tmux'), 'apt-get install tmux');
export const stracePresent = () => systemToolPresent('strace', onPath('strace'), 'apt-get install strace');
