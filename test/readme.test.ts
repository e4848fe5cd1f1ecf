/** The README's promises, checked: its commands exist and its code example runs as printed. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, REPO } from './helpers/cli.ts';
import { EXAMPLE_DONE_OUTPUT, readmeProgrammaticExample } from './helpers/readme-example.ts';
import { tempDir } from './helpers/temp-dir.ts';

const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');

describe('README', () => {
  it('starts with the install-and-run command and the test command', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
    const commands = firstBlock.trim().split('\n').map((line) => line.split('#')[0]!.trim());
    expect(commands).toEqual(['npm ci && npx durable-agent demo --dir demo-run', 'npm test']);
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
    // npm ci runs `prepare`, which builds dist/, so the first command runs the compiled CLI.
    expect(pkg.scripts.prepare).toBe('npm run build');
    expect(pkg.scripts.test).toBe('npm run build && tsc --noEmit && vitest run');
    expect(pkg.bin['durable-agent']).toBe('bin/durable-agent.mjs');
  });

  it('has a programmatic example that runs with plain node as printed, crashes on demand with a clear line, and resumes', () => {
    // Written inside the package so that `import … from 'durable-agent'` resolves to this checkout's build.
    const scratch = path.join(REPO, '.tmp');
    fs.mkdirSync(scratch, { recursive: true });
    const file = path.join(scratch, `readme-example-${process.pid}.mjs`);
    fs.writeFileSync(file, readmeProgrammaticExample());
    const cwd = tempDir();
    try {
      const run = (crashAfter: string) =>
        spawnSync(process.execPath, [file], { cwd, encoding: 'utf8', env: cliEnv({ CRASH_AFTER: crashAfter }) });
      const crashed = run('after-effect-write:1');
      expect(crashed.status).toBe(137);
      expect(crashed.stdout).toBe('');
      expect(crashed.stderr).toMatch(/^simulated kill at after-effect-write:1 \(.*\): the run is saved up to this point; resumeRun picks it up\.\n$/);

      const resumed = run('');
      expect(resumed.stderr).toBe('');
      expect(resumed.stdout).toBe(EXAMPLE_DONE_OUTPUT);

      const again = run('');
      expect(again.stdout).toBe(EXAMPLE_DONE_OUTPUT);
      expect(fs.readdirSync(path.join(cwd, '.agent-state', 'archive'))).toHaveLength(1);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
