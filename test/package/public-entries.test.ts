/**
 * The main entry as a program imports it from the build: a short list of values (the error
 * classes, the test kit and the implementation's parts are in entries of their own), and no
 * default handed out as a constant. A default is the documentation of its option instead, and
 * that documentation, as the published declarations carry it, says the value the runtime uses.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { MAX_PAUSES_IN_A_ROW } from '../../machines/agent-loop.types.ts';
import { DEFAULT_CLEAR_KEEP, DEFAULT_CLEAR_TRIGGER_TOKENS } from '../../src/compaction/clear-tool-uses.ts';
import { DEFAULT_TRIGGER_RATIO } from '../../src/compaction/compaction-settings.ts';
import { DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS } from '../../src/runtime/run-api.ts';
import { DEFAULT_SNAPSHOT_EVERY } from '../../src/runtime/snapshot-policy.ts';
import { DEFAULT_TOOL_CONCURRENCY } from '../../src/runtime/tool-scheduler.ts';
import { DEFAULT_LOCK_LEASE_MS } from '../../src/store/lock-file.ts';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../../src/tools/execute-call.ts';
import { REPO } from '../helpers/cli.ts';

/** The most values the main entry may export: what a program needs to run agents, not the package's insides. */
const MAX_MAIN_EXPORTS = 40;

const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));

async function built(subpath: string): Promise<Record<string, unknown>> {
  return import(pathToFileURL(path.join(REPO, manifest.exports[subpath].default)).href);
}

describe('the built main entry', () => {
  it(`exports at most ${MAX_MAIN_EXPORTS} values, openRun among them, and none of the test kit's`, async () => {
    const main = await built('.');
    const names = Object.keys(main);
    expect(names.length, names.join(', ')).toBeLessThanOrEqual(MAX_MAIN_EXPORTS);
    expect(names).toEqual(expect.arrayContaining(['startRun', 'resumeRun', 'openRun', 'defineTool', 'anthropicModel', 'mcpTools', 'FileStore', 'DurableAgentError', 'OptionalDependencyMissingError']));
    const kit = Object.keys(await built('./testing'));
    expect(kit.length).toBeGreaterThan(5);
    expect(names.filter((name) => kit.includes(name))).toEqual([]);
  });

  it('hands out no default as a constant, and none of the free run functions the handle replaces', async () => {
    const names = Object.keys(await built('.'));
    expect(names.filter((name) => /^[A-Z][A-Z0-9_]+$/.test(name) && name !== 'ERROR_KINDS')).toEqual([]);
    const replaced = ['readRunStatus', 'readRunHistory', 'pendingDecisions', 'decide', 'cancelRun', 'pauseRun', 'unpauseRun', 'forkRun', 'pruneRuns'];
    expect(names.filter((name) => replaced.includes(name))).toEqual([]);
  });

  it('lists durable-agent/errors in "exports" as the other entries are listed, types first', () => {
    expect(Object.keys(manifest.exports['./errors'])).toEqual(['types', 'default']);
    for (const [subpath, target] of Object.entries<string | Record<string, string>>(manifest.exports)) {
      if (typeof target === 'string') continue;
      for (const file of Object.values(target)) expect(fs.existsSync(path.join(REPO, file)), `${subpath}: ${file}`).toBe(true);
    }
  });
});

/** The JSDoc of `member` of `interfaceName` in a declaration file of the build. */
function docOf(declarations: string, interfaceName: string, member: string): string {
  const file = path.join(REPO, 'dist', declarations);
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found = source.statements.find((statement): statement is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(statement) && statement.name.text === interfaceName);
  if (!found) throw new Error(`${declarations}: no interface ${interfaceName}`);
  const property = found.members.find((candidate) => candidate.name !== undefined && ts.isIdentifier(candidate.name) && candidate.name.text === member);
  if (!property) throw new Error(`${declarations}: ${interfaceName} has no ${member}`);
  return ts.getJSDocCommentsAndTags(property).map((doc) => doc.getText(source)).join('\n');
}

describe('a default is documented on its option, with the value the runtime uses', () => {
  const documented: Array<[string, string, string, string]> = [
    ['src/runtime/run-options.d.ts', 'StartOptions', 'maxTurns', `Default: ${DEFAULT_MAX_TURNS}.`],
    ['src/runtime/run-options.d.ts', 'StartOptions', 'maxPausesInARow', `Default: ${MAX_PAUSES_IN_A_ROW}.`],
    ['src/runtime/run-options.d.ts', 'RunParts', 'maxTokens', `Default: ${DEFAULT_MAX_TOKENS}.`],
    ['src/runtime/run-options.d.ts', 'RunParts', 'toolConcurrency', `Default: ${DEFAULT_TOOL_CONCURRENCY}.`],
    ['src/runtime/run-options.d.ts', 'RunParts', 'toolTimeoutMs', `Default: ${DEFAULT_TOOL_TIMEOUT_MS} (`],
    ['src/runtime/run-options.d.ts', 'RunParts', 'snapshotEvery', `DURABLE_AGENT_SNAPSHOT_EVERY, else ${DEFAULT_SNAPSHOT_EVERY} (`],
    ['src/compaction/compaction-settings.d.ts', 'CompactionOptions', 'triggerRatio', `Default: ${DEFAULT_TRIGGER_RATIO}.`],
    ['src/compaction/clear-tool-uses.d.ts', 'ClearToolUsesOptions', 'keep', `Default: ${DEFAULT_CLEAR_KEEP} (`],
    ['src/compaction/clear-tool-uses.d.ts', 'ClearToolUsesOptions', 'triggerTokens', `else ${DEFAULT_CLEAR_TRIGGER_TOKENS} (`],
    ['src/store/file-store.d.ts', 'FileStoreOptions', 'lockLeaseMs', `Default: ${DEFAULT_LOCK_LEASE_MS} (`],
  ];
  it.each(documented)('%s %s.%s says %s', (declarations, interfaceName, member, words) => {
    expect(docOf(declarations, interfaceName, member).replace(/\s*\n\s*\*\s*/g, ' ')).toContain(words);
  });
});
