/** The README's promises, checked: its commands exist and its code example runs as printed. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO } from './helpers/cli.ts';
import { tempDir } from './helpers/temp-dir.ts';

const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');

describe('README', () => {
  it('starts with the install-and-run command and the test command', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
    const commands = firstBlock.trim().split('\n').map((line) => line.split('#')[0]!.trim());
    expect(commands).toEqual(['npm ci && npx durable-agent demo --dir demo-run', 'npm test']);
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
    expect(pkg.scripts.test).toBe('tsc --noEmit && vitest run');
    expect(pkg.bin['durable-agent']).toBe('bin/durable-agent.mjs');
  });

  it('has a programmatic example that runs as printed, crashes on demand and resumes', () => {
    const section = readme.slice(readme.indexOf('## Programmatic use'));
    const code = /```ts\n([\s\S]*?)```/.exec(section)![1]!;
    // Written inside the package so that `import … from 'durable-agent'` resolves to this checkout.
    const scratch = path.join(REPO, '.tmp');
    fs.mkdirSync(scratch, { recursive: true });
    const file = path.join(scratch, `readme-example-${process.pid}.ts`);
    fs.writeFileSync(file, code);
    const cwd = tempDir();
    try {
      const tsx = createRequire(path.join(REPO, 'package.json')).resolve('tsx');
      const run = (crashAfter: string) =>
        spawnSync(process.execPath, ['--import', pathToFileURL(tsx).href, file], {
          cwd,
          encoding: 'utf8',
          env: { ...process.env, CRASH_AFTER: crashAfter },
        });
      const crashed = run('after-effect-write:1');
      expect(crashed.status).not.toBe(0);
      expect(crashed.stderr).toContain('SimulatedCrash');
      expect(crashed.stdout).toBe('');

      const resumed = run('');
      expect(resumed.stderr).toBe('');
      expect(resumed.stdout).toBe('done Invoice sent.\n1 ledger entry\n');

      const again = run('');
      expect(again.stdout).toBe('done Invoice sent.\n1 ledger entry\n');
      expect(fs.readdirSync(path.join(cwd, '.agent-state', 'archive'))).toHaveLength(1);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
