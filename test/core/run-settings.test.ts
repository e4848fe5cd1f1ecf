/**
 * Each capability pins its own settings in a run's header and holds a resume against them
 * (src/core/run-settings.ts): a resume that changes a pinned setting is refused by that
 * capability's check, with its own error and nothing changed; a resume holds the run against
 * its origin once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { AgentContext } from '../../machines/agent-loop.types.ts';
import { PolicyLoosenedError } from '../../src/awaits/decision-errors.ts';
import { CompactionSettingsError } from '../../src/compaction/compaction-settings.ts';
import { checkSettings, pinSettings, plugSettings, reopenSettings, type RunSettings, type RunSettingsOf } from '../../src/core/run-settings.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import * as origin from '../../src/runtime/run-origin.ts';
import { resumeRun, type RunParts, startRun, type StartOptions } from '../../src/runtime/run-api.ts';
import { FileStore, JOURNAL_FILE } from '../../src/store/file-store.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { ToolRegistry } from '../../src/tools/tool-registry.ts';
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

describe('the runtime hands each setting the piece of the options under its name, in the order they are written', () => {
  interface Given {
    first: { tag: string };
    second: number;
  }
  const seen: unknown[] = [];
  const SETTINGS: RunSettingsOf<Given> = {
    first: {
      pin(run, given) {
        seen.push(['pin first', given]);
        return { ...run, pinned: { ...run.pinned, agent: { name: given.tag, version: '1' } } };
      },
      check(run, given) {
        seen.push(['check first', given]);
        return run;
      },
      plug: (_run, given, parts) => ({ model: { ...parts.model, name: `${parts.model.name}+${given.tag}` } }),
    },
    second: {
      pin(run, given) {
        seen.push(['pin second', given, run.pinned.agent?.name]);
        return run;
      },
      plug: (_run, given, parts) => ({ capability: { name: `${parts.model.name} x${given}` } }),
      reopen: (context, given) => (context.turn === 0 ? null : { budget: { budget: { maxTotalTokens: given * 1000 } } }),
    },
  };
  const given: Given = { first: { tag: 'a' }, second: 2 };
  const run: RunSettings = { location: 'here', tools: [], pinned: {}, version: 1 };

  it('pins and checks: each sees its own piece and what the ones before it made', async () => {
    seen.length = 0;
    await pinSettings(SETTINGS, run, given);
    checkSettings(SETTINGS, run, given);
    expect(seen).toEqual([['pin first', { tag: 'a' }], ['pin second', 2, 'a'], ['check first', { tag: 'a' }]]);
  });

  it('plugs in: the capabilities in their order, the model as the settings before each one left it', () => {
    const model = scriptedModel([]);
    const plugged = plugSettings(SETTINGS, run, given, { registry: new ToolRegistry([]), model, maxTokens: 100 });
    expect(plugged.model.name).toBe(`${model.name}+a`);
    expect(plugged.capabilities.map((capability) => capability.name)).toEqual([`${model.name}+a x2`]);
  });

  it("reopens: what a resume changes in the run's context, from the context loaded; null when no setting changes it", () => {
    const context = { turn: 1 } as AgentContext;
    expect(reopenSettings(SETTINGS, context, given)).toEqual({ budget: { budget: { maxTotalTokens: 2000 } } });
    expect(reopenSettings(SETTINGS, { ...context, turn: 0 }, given)).toBeNull();
  });
});
