/**
 * The command line loads only what a command needs: `--help` and `status` start without the
 * runtime's machine library, the model SDK, the TUI, the visualizer or pg, and a command without
 * the declarations of the others.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { REPO, runCliAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const HEAVY_PACKAGES = /\/node_modules\/(hono|@hono|xstate|@anthropic-ai|ink|react|react-reconciler|elkjs|pg|ajv|@xstate|@opentelemetry|@modelcontextprotocol)\//;

async function loadedBy(args: string[], cwd: string): Promise<string[]> {
  const log = path.join(tempDir(), 'imports.log');
  const hook = pathToFileURL(path.join(REPO, 'test/fixtures/log-imports.mjs')).href;
  const run = await runCliAsync(args, { cwd, env: { NODE_OPTIONS: `--import ${hook}`, IMPORT_LOG: log } });
  expect(run.code, run.stderr).toBe(0);
  return fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

it('`--help` loads no package and none of the runtime', async () => {
  const loaded = await loadedBy(['--help'], tempDir());
  expect(loaded.some((url) => url.includes('/cli/main.')), 'the hook sees the CLI').toBe(true);
  expect(loaded.filter((url) => HEAVY_PACKAGES.test(url))).toEqual([]);
  expect(loaded.filter((url) => /\/cli\/commands\/|\/tui\/|\/visualizer\/|\/runtime\/run-(api|driver)\./.test(url))).toEqual([]);
  // The error classes of the other parts load only when a command fails (src/cli/report-error.ts).
  expect(loaded.filter((url) => /\/(approval|mcp|telemetry|prune|store\/pg)\/|\/cli\/report-error\./.test(url))).toEqual([]);
});

it('`demo --help` loads the help, not the demo', async () => {
  const loaded = await loadedBy(['demo', '--help'], tempDir());
  expect(loaded.filter((url) => url.includes('/cli/commands/') || HEAVY_PACKAGES.test(url))).toEqual([]);
});

it('`status` reads a run without the machine library, the SDK, the TUI, the visualizer or pg', async () => {
  const dir = tempDir();
  expect((await runCliAsync(['demo'], { cwd: dir })).code).toBe(0);
  const loaded = await loadedBy(['status'], dir);
  expect(loaded.some((url) => url.includes('/cli/commands/status.')), 'the hook sees the command').toBe(true);
  expect(loaded.filter((url) => HEAVY_PACKAGES.test(url))).toEqual([]);
  expect(loaded.filter((url) => /\/(tui|visualizer)\/|\/runtime\/run-(api|driver)\./.test(url))).toEqual([]);
});

it('`status`, `history`, `list` and `pending` load their own declaration and no other, and read the run without its lock', async () => {
  const dir = tempDir();
  expect((await runCliAsync(['demo'], { cwd: dir })).code).toBe(0);
  const declares = { status: 'status', history: 'status', list: 'list', pending: 'decide' };
  for (const [command, spec] of Object.entries(declares)) {
    const loaded = await loadedBy([command], dir);
    expect(loaded.some((url) => url.includes('/cli/commands/')), `${command}: the hook sees the command`).toBe(true);
    expect(loaded.filter((url) => /\/cli\/specs\//.test(url)).map((url) => path.basename(url).replace(/\.[jt]s$/, '')), command).toEqual([spec]);
    expect(loaded.filter((url) => /\/cli\/(command-table|help)\.|\/store\/lock-file\./.test(url)), command).toEqual([]);
  }
});

it('`demo` without the OpenTelemetry variables loads no OpenTelemetry package and none of the tracing', async () => {
  const loaded = await loadedBy(['demo'], tempDir());
  expect(loaded.some((url) => url.includes('/runtime/run-api.')), 'the hook sees the runtime').toBe(true);
  expect(loaded.filter((url) => /\/node_modules\/@opentelemetry\/|\/telemetry\/(run-tracing|otlp-export)\./.test(url))).toEqual([]);
});

it('`pending`, `approve` and `deny` read and decide without the machine library, the SDK, the TUI, ajv or pg', async () => {
  const dir = tempDir();
  expect((await runCliAsync(['demo', '--require-approval', 'write_report', '--no-wait'], { cwd: dir })).code).toBe(7);
  for (const [args, command] of [
    [['pending'], 'pending'],
    [['deny', 'toolu_03', '--reason', 'not now'], 'decide'],
  ] as const) {
    const loaded = await loadedBy([...args], dir);
    expect(loaded.some((url) => url.includes(`/cli/commands/${command}.`)), 'the hook sees the command').toBe(true);
    expect(loaded.filter((url) => HEAVY_PACKAGES.test(url))).toEqual([]);
    expect(loaded.filter((url) => /\/(tui|visualizer)\/|\/runtime\/run-(api|driver)\./.test(url))).toEqual([]);
  }
  // `pending` reads and never decides: the commands and checks of a decision are not loaded.
  const pending = await loadedBy(['pending'], dir);
  expect(pending.filter((url) => /\/cli\/commands\/decide\.|\/awaits\/(decide|decision-errors)\.|\/tools\/tool-contract\./.test(url))).toEqual([]);
});
