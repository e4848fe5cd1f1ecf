/**
 * Each capability pins its own settings in a run's header and holds a resume against them
 * (src/core/run-settings.ts): a resume that changes a pinned setting is refused by that
 * capability's check, with its own error and nothing changed; a resume holds the run against
 * its origin once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { PolicyLoosenedError } from '../../src/awaits/decision-errors.ts';
import { CompactionSettingsError } from '../../src/compaction/compaction-settings.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import * as origin from '../../src/runtime/run-origin.ts';
import { resumeRun, type RunParts, startRun, type StartOptions } from '../../src/runtime/run-api.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import type { LoadOptions, RunStore } from '../../src/store/store.ts';
import { countingTools } from '../helpers/counting-tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

// The real checkOrigin, counted: how often a resume holds the run against its origin.
vi.mock('../../src/runtime/run-origin.ts', async (actual) => {
  const real = await actual<typeof import('../../src/runtime/run-origin.ts')>();
  return { ...real, checkOrigin: vi.fn(real.checkOrigin) };
});

const SCRIPT = [
  toolUseReply([{ id: 'toolu_1', name: 'lookup', input: { q: 'a' } }]),
  toolUseReply([{ id: 'toolu_2', name: 'charge_card', input: { amount: 5 } }]),
  endTurnReply('done'),
];

type Settings = Partial<Pick<StartOptions, 'decisionTimeoutMs' | 'compaction' | 'wait'>>;

/** A run started with `settings`, crashed right after checkpoint A of its second call. */
async function crashedRun(store: RunStore, settings: Settings): Promise<void> {
  const start = startRun({ store, model: scriptedModel(SCRIPT), tools: countingTools().tools, task: 'charge', crashAfter: 'after-save-a:2', ...settings });
  await expect(start).rejects.toThrow(SimulatedCrash);
}

function resumeWith(store: RunStore, settings: Partial<RunParts> & { replaceDecisionPolicy?: boolean }) {
  return resumeRun({ store, model: scriptedModel(SCRIPT), tools: countingTools().tools, ...settings });
}

describe("a capability's check refuses a resume that changes what the run pinned, with nothing changed", () => {
  it('the rule for decisions: a longer deadline is refused (PolicyLoosenedError) unless replaceDecisionPolicy says so', async () => {
    const dir = path.join(tempDir(), '.durable-agent');
    await crashedRun(new FileStore(dir), { decisionTimeoutMs: 60_000 });
    const journal = fs.readFileSync(path.join(dir, JOURNAL_FILE));
    const refusal = await resumeWith(new FileStore(dir), { decisionTimeoutMs: 120_000 }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PolicyLoosenedError);
    expect(refusal).toMatchObject({ name: 'PolicyLoosenedError', location: expect.stringContaining(dir) });
    expect((refusal as Error).message).toMatch(/--replace-decision-policy/);
    expect(fs.readFileSync(path.join(dir, JOURNAL_FILE))).toEqual(journal);
    await expect(resumeWith(new FileStore(dir), { decisionTimeoutMs: 120_000, replaceDecisionPolicy: true })).resolves.toMatchObject({ status: 'done' });
  });

  it("the context: another compaction mode is refused (CompactionSettingsError); the run's own goes on", async () => {
    const dir = path.join(tempDir(), '.durable-agent');
    await crashedRun(new FileStore(dir), { compaction: { mode: 'client', contextWindow: 100_000 } });
    const journal = fs.readFileSync(path.join(dir, JOURNAL_FILE));
    const refusal = await resumeWith(new FileStore(dir), { compaction: { mode: 'off' } }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(CompactionSettingsError);
    expect((refusal as Error).message).toContain('was started with compaction client; a resume cannot switch it to off');
    expect(fs.readFileSync(path.join(dir, JOURNAL_FILE))).toEqual(journal);
    await expect(resumeWith(new FileStore(dir), { compaction: { mode: 'client', contextWindow: 200_000 } })).resolves.toMatchObject({ status: 'done' });
  });
});

/** A store that reads the header only with the records: it never offers it before repairing (as one of the benchmarks' does). */
class LateHeaderStore extends MemoryStore {
  override load(options: LoadOptions = {}) {
    const { checkHeader: _ignored, ...rest } = options;
    return super.load(rest);
  }
}

describe('a resume holds the run against its origin', () => {
  it.each([
    ['a store that offers the header before it repairs', () => new MemoryStore()],
    ['a store that does not', () => new LateHeaderStore()],
  ])('once, with %s', async (_, makeStore) => {
    const store = makeStore();
    await crashedRun(store, {});
    vi.mocked(origin.checkOrigin).mockClear();
    await expect(resumeWith(store, {})).resolves.toMatchObject({ status: 'done' });
    expect(origin.checkOrigin).toHaveBeenCalledTimes(1);
  });

  it('once when it is refused for another command, before anything is repaired', async () => {
    const store = new MemoryStore();
    await crashedRun(store, {});
    vi.mocked(origin.checkOrigin).mockClear();
    await expect(resumeWith(store, { command: 'demo' })).rejects.toThrow(origin.RunOriginMismatchError);
    expect(origin.checkOrigin).toHaveBeenCalledTimes(1);
  });
});
