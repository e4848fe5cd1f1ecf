/**
 * `durable-agent viz` as a user runs it: the real CLI in a child process.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { machineGraphOf } from '../../visualizer/machine-graph.ts';
import { statelySource } from '../../visualizer/stately-source.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const SECRET = 'test-only-viz-secret-never-written';

describe('durable-agent viz', () => {
  it.concurrent('prints the machine for Stately Studio with --stately', async () => {
    const run = await runCliAsync(['viz', '--stately'], { cwd: tempDir() });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(statelySource(machineGraphOf(agentLoopMachine), 'machines/agent-loop.machine.ts'));
    expect(run.stderr).toBe('');
  });

  it.concurrent('refuses --stately with --out, saying what to do instead', async () => {
    const run = await runCliAsync(['viz', '--stately', '--out', 'x.html'], { cwd: tempDir() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('redirect it');
  });

  it.concurrent('--run ID draws that run of the folder beside its others; a folder of runs by id points at them; an id with no run is refused', async () => {
    const dir = tempDir();
    for (const id of ['report-2', 'report-1']) expect((await runCliAsync(['demo', '--run', id], { cwd: dir })).code).toBe(0);
    const drawn = await runCliAsync(['viz', '--run', 'report-1'], { cwd: dir });
    expect(drawn.code, drawn.stderr).toBe(0);
    const file = path.join(dir, '.durable-agent', 'viz-report-1.html');
    expect(drawn.stdout).toMatch(new RegExp(`^\\[viz\\] wrote ${file}: \\d+ records of run report-1 \\(done, 1 process, 0 stopped and resumed\\)\n$`));
    const html = fs.readFileSync(file, 'utf8');
    expect(html).toContain('durable-agent · run report-1');
    // Its fork command names the run, and a new directory named after it.
    expect(html).toContain(`fork --dir ${dir} --run report-1 --at`);
    expect(html).toContain(`--to ${dir}-report-1-at-`);

    const own = await runCliAsync(['viz'], { cwd: dir });
    expect(own.code).toBe(0);
    expect(own.stderr).toMatch(/the folder holds runs by id \(report-1, report-2\): draw one with .*durable-agent viz --run report-1\./);
    expect(own.stderr).not.toContain('demo');

    const missing = await runCliAsync(['viz', '--run', 'report-3'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`No run is stored at ${path.join(dir, '.durable-agent', 'runs', 'report-3')}`);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'viz-report-3.html'))).toBe(false);
  });

  it.concurrent('draws the machine alone where there is no run, and says so', async () => {
    const dir = tempDir();
    const run = await runCliAsync(['viz', '--dir', dir], { cwd: dir });
    expect(run.code).toBe(0);
    const file = path.join(dir, '.durable-agent', 'viz.html');
    expect(run.stdout).toBe(`[viz] wrote ${file}: the machine only\n`);
    expect(run.stderr).toContain('no run in');
    const html = fs.readFileSync(file, 'utf8');
    for (const state of Object.keys(agentLoopMachine.root.states)) expect(html).toContain(`data-state="${state}"`);
    expect(html).toContain('"run":null');
  });

  it.concurrent('writes one self-contained page for a run, with nothing fetched and no secret in it', async () => {
    const dir = tempDir();
    const env = { ANTHROPIC_API_KEY: SECRET };
    expect((await runCliAsync(['demo'], { cwd: dir, env: { ...env, CRASH_AFTER: 'after-save-b:2' } })).code).toBe(137);
    expect((await runCliAsync(['demo', '--resume'], { cwd: dir, env })).code).toBe(0);
    const out = path.join(dir, 'page', 'run.html');
    const run = await runCliAsync(['viz', '--out', out], { cwd: dir, env });
    expect(run.code).toBe(0);
    const records = (JSON.parse((await runCliAsync(['history', '--json'], { cwd: dir })).stdout) as unknown[]).length;
    expect(run.stdout).toMatch(new RegExp(`^\\[viz\\] wrote .*run\\.html: ${records} records of run [0-9a-f-]+ \\(done, 2 processes, 1 stopped and resumed\\)\n$`));
    const html = fs.readFileSync(out, 'utf8');
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"`);
    expect(html).not.toMatch(/<(link|img|iframe)\b|<script[^>]+src=|\burl\(\s*['"]?(https?:)?\/\//i);
    expect(html).not.toContain(SECRET);
    expect(fs.readdirSync(path.dirname(out))).toEqual(['run.html']); // no temporary file left behind
  });

  it.concurrent('refuses a damaged journal, as status does', async () => {
    const dir = tempDir();
    expect((await runCliAsync(['demo'], { cwd: dir })).code).toBe(0);
    const journal = path.join(dir, '.durable-agent', 'journal.jsonl');
    const bytes = fs.readFileSync(journal);
    bytes[bytes.length - 30] = bytes[bytes.length - 30]! ^ 0x01;
    fs.writeFileSync(journal, bytes);
    const run = await runCliAsync(['viz'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('checksum mismatch');
  });

  it.concurrent('opens the page with the desktop opener when asked', async ({ expect }) => {
    const dir = tempDir();
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    const log = path.join(dir, 'opened.txt');
    fs.writeFileSync(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > "${log}"\n`, { mode: 0o755 });
    const run = await runCliAsync(['viz', '--open'], { cwd: dir, env: { PATH: `${bin}:${process.env.PATH}` } });
    expect(run.code).toBe(0);
    await expect.poll(() => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '')).toBe(path.join(dir, '.durable-agent', 'viz.html'));
  });

  it.concurrent('says so when the opener runs but cannot open anything (xdg-open without a browser exits 3)', async () => {
    const dir = tempDir();
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'xdg-open'), `#!/bin/sh\necho "xdg-open: no method available for opening '$1'" >&2\nexit 3\n`, { mode: 0o755 });
    const run = await runCliAsync(['viz', '--open'], { cwd: dir, env: { PATH: `${bin}:${process.env.PATH}` } });
    expect(run.code).toBe(0);
    const page = path.join(dir, '.durable-agent', 'viz.html');
    expect(run.stderr).toContain(`could not open a browser (xdg-open exited with code 3): open ${page} yourself.`);
    expect(fs.existsSync(page)).toBe(true);
  });

  it.concurrent('refuses a --dir that does not exist instead of creating it', async () => {
    const parent = tempDir();
    const missing = path.join(parent, 'no-such-run');
    const run = await runCliAsync(['viz', '--dir', missing], { cwd: parent });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--dir ${missing}: no such directory`);
    expect(fs.readdirSync(parent)).toEqual([]);
  });

  it.concurrent('counts one process as one process', async () => {
    const dir = tempDir();
    expect((await runCliAsync(['demo'], { cwd: dir })).code).toBe(0);
    const run = await runCliAsync(['viz'], { cwd: dir });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/\(done, 1 process, 0 stopped and resumed\)\n$/);
  });

  it.concurrent('still writes the page when no opener can be found, and says where it is', async () => {
    const dir = tempDir();
    const run = await runCliAsync(['viz', '--open'], { cwd: dir, env: { PATH: path.join(dir, 'nowhere') } });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`could not open a browser (xdg-open: ENOENT): open ${path.join(dir, '.durable-agent', 'viz.html')} yourself.`);
    expect(fs.existsSync(path.join(dir, '.durable-agent', 'viz.html'))).toBe(true);
  });
});
