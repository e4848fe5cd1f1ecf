/**
 * What an armed crash point does in a program (`onCrash`): throw SimulatedCrash (the default),
 * exit the process with 137 like a kill ('exit'), or call the caller's function.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SIMULATED_CRASH_EXIT_CODE, SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { readRunStatus } from '../../src/runtime/run-status.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { cliEnv, REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks something up.',
  inputSchema: { type: 'object' },
  readOnly: true,
  run: () => 'found',
});
const script = () => scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'lookup', input: {} }]), endTurnReply('ok')]);

describe('onCrash', () => {
  it('throws SimulatedCrash by default, naming the point and what to do next', async () => {
    const store = new MemoryStore();
    const error = await startRun({ store, model: script(), tools: [lookup], task: 't', crashAfter: 'after-effect-write:1', onCrash: undefined }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SimulatedCrash);
    expect((error as SimulatedCrash).label).toBe('after-effect-write:1');
    expect((error as SimulatedCrash).message).toContain('resumeRun');
    expect((await readRunStatus(store)).ledgerEntries).toBe(1);
  });

  it('calls a function with the label instead', async () => {
    const labels: string[] = [];
    const result = await startRun({ store: new MemoryStore(), model: script(), tools: [lookup], task: 't', crashAfter: 'after-save-a:1', onCrash: (label) => labels.push(label) });
    expect(labels).toEqual(['after-save-a:1']);
    expect(result.status).toBe('done');
  });

  it("'exit' ends the process with 137 after one line on stderr, the run saved up to the point", () => {
    // A program of a user's, run with plain node against this checkout's build (self-reference).
    const scratch = path.join(REPO, '.tmp');
    fs.mkdirSync(scratch, { recursive: true });
    const file = path.join(scratch, `crash-exit-${process.pid}.mjs`);
    fs.writeFileSync(
      file,
      `import { defineTool, FileStore, startRun } from 'durable-agent';
import { endTurnReply, scriptedModel, toolUseReply } from 'durable-agent/testing';
const lookup = defineTool({ name: 'lookup', description: 'd', inputSchema: { type: 'object' }, readOnly: true, run: () => 'found' });
const model = scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'lookup', input: {} }]), endTurnReply('ok')]);
await startRun({ store: new FileStore('state'), model, tools: [lookup], task: 't', crashAfter: 'after-effect-write:1', onCrash: 'exit' });
console.log('not reached');
`,
    );
    const cwd = tempDir();
    try {
      const run = spawnSync(process.execPath, [file], { cwd, encoding: 'utf8', env: cliEnv() });
      expect(run.status).toBe(SIMULATED_CRASH_EXIT_CODE);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^durable-agent: simulated kill at after-effect-write:1 .*exiting with code 137.*resumeRun picks it up\.\n$/);
      // The folder a program names keeps its runs in its .durable-agent/, where `--dir state` reads them.
      expect(fs.readFileSync(path.join(cwd, 'state', '.durable-agent', 'journal.jsonl'), 'utf8')).toContain('toolu_1');
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
