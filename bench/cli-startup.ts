/**
 * npm run bench:cli [-- --runs N] [-- --check]
 *
 * How long the command takes as a user runs it: whole processes of the built CLI
 * (bin/durable-agent.mjs → dist/), each timed from spawn to exit, interleaved round by round with
 * `node -e 0` so that all of them meet the same machine load. Cases: `--help`; `status`, `list`,
 * `pending` and `history` of a finished demo run; the whole demo (scripted model, plain output, a
 * fresh directory each time).
 * Prints medians and their ratios to `node -e 0` against the targets, and writes them to
 * bench/results/cli.json. --check exits 1 when a target is missed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './stats.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'durable-agent.mjs');
const RESULTS = path.join(ROOT, 'bench', 'results', 'cli.json');

interface Case {
  name: string;
  /** The largest ratio to `node -e 0` allowed (none for the baseline itself). */
  target: number | null;
  args: () => string[];
}

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

const runs = Number(option('--runs') ?? 15);
const warmups = 2;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'da-bench-cli-'));
const statusDir = path.join(scratch, 'finished');
let demoDirs = 0;

const CASES: Case[] = [
  { name: 'node -e 0', target: null, args: () => ['-e', '0'] },
  { name: '--help', target: 3, args: () => [BIN, '--help'] },
  // The commands that read a run: what a user types most, each within 2× a bare node.
  { name: 'status', target: 2, args: () => [BIN, 'status', '--dir', statusDir] },
  { name: 'list', target: 2, args: () => [BIN, 'list', '--dir', statusDir] },
  { name: 'pending', target: 2, args: () => [BIN, 'pending', '--dir', statusDir] },
  { name: 'history', target: 2, args: () => [BIN, 'history', '--dir', statusDir] },
  { name: 'demo', target: 6, args: () => [BIN, 'demo', '--dir', path.join(scratch, `demo-${demoDirs++}`)] },
];

/** The child's environment: no crash drills or API settings inherited, stdout a pipe (plain output). */
const env: NodeJS.ProcessEnv = { ...process.env };
for (const name of ['CRASH_AFTER', 'CRASH_MODE', 'DURABLE_AGENT_FAIL_WRITE', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'NODE_OPTIONS']) delete env[name];

function timeOnce(spec: Case): number {
  const started = process.hrtime.bigint();
  const child = spawnSync(process.execPath, spec.args(), { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (child.status !== 0) throw new Error(`${spec.name} exited with ${child.status}: ${child.stderr}`);
  return ms;
}

try {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'src', 'cli', 'main.js'))) throw new Error('dist/ is missing: npm run bench:cli builds it first.');
  const prepared = spawnSync(process.execPath, [BIN, 'demo', '--dir', statusDir], { env, encoding: 'utf8' });
  if (prepared.status !== 0) throw new Error(`the demo run for status failed: ${prepared.stderr}`);

  const samples = new Map<string, number[]>(CASES.map((spec) => [spec.name, []]));
  const started = Date.now();
  const loadBefore = os.loadavg()[0]!;
  for (let round = 0; round < warmups + runs; round++) {
    // Each round starts with another case, so no case always runs right after the same one.
    for (let i = 0; i < CASES.length; i++) {
      const spec = CASES[(round + i) % CASES.length]!;
      const ms = timeOnce(spec);
      if (round >= warmups) samples.get(spec.name)!.push(ms);
    }
  }
  const loadAfter = os.loadavg()[0]!;

  const baseline = median(samples.get('node -e 0')!);
  const figures = CASES.map((spec) => {
    const values = samples.get(spec.name)!;
    const medianMs = median(values);
    const ratio = medianMs / baseline;
    return {
      name: spec.name,
      medianMs: round1(medianMs),
      minMs: round1(Math.min(...values)),
      maxMs: round1(Math.max(...values)),
      ratio: Math.round(ratio * 100) / 100,
      target: spec.target,
      met: spec.target === null ? null : ratio <= spec.target,
    };
  });

  const header = `durable-agent bench:cli: node ${process.version}, ${os.cpus().length} cores, ${os.platform()}; ${runs} runs per case, interleaved; load average ${loadBefore.toFixed(1)} at the start, ${loadAfter.toFixed(1)} at the end; ${((Date.now() - started) / 1000).toFixed(0)} s`;
  console.log(header);
  console.log('');
  console.log(`${'command'.padEnd(12)}${'median ms'.padStart(11)}${'min ms'.padStart(9)}${'max ms'.padStart(9)}${'÷ node -e 0'.padStart(13)}${'target'.padStart(9)}`);
  for (const row of figures) {
    const verdict = row.target === null ? '' : `≤ ${row.target}× ${row.met ? 'met' : 'MISSED'}`;
    console.log(`${row.name.padEnd(12)}${row.medianMs.toFixed(1).padStart(11)}${row.minMs.toFixed(1).padStart(9)}${row.maxMs.toFixed(1).padStart(9)}${`${row.ratio.toFixed(2)}×`.padStart(13)}  ${verdict}`.trimEnd());
  }

  fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
  fs.writeFileSync(
    RESULTS,
    `${JSON.stringify({ node: process.version, cores: os.cpus().length, platform: os.platform(), runs, loadAverage: { start: loadBefore, end: loadAfter }, figures }, null, 2)}\n`,
  );
  console.log(`\nwritten to ${path.relative(ROOT, RESULTS)}`);
  if (process.argv.includes('--check') && figures.some((row) => row.met === false)) process.exitCode = 1;
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
