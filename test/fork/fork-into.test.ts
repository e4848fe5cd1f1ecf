/**
 * A forked run is written the same way into any store: whole, or refused with nothing written
 * where a run is stored already; a store that writes forks its own way (createFork) is asked to.
 */
import { describe, expect, it } from 'vitest';
import { createForked } from '../../src/store/fork-into.ts';
import type { ForkedRun, RunStore } from '../../src/store/store.ts';
import { forkRun } from '../../src/fork/fork-run.ts';
import { ForkRefusedError } from '../../src/fork/fork-errors.ts';
import { MemoryStore, scriptedModel, endTurnReply } from '../../src/testing.ts';
import { startRun } from '../../src/index.ts';

async function finishedRun(): Promise<MemoryStore> {
  const store = new MemoryStore();
  await startRun({ store, model: scriptedModel([endTurnReply('done')]), tools: [], task: 'Say done' });
  return store;
}

describe('writing a forked run', () => {
  it('writes it with createWith under the lock, and refuses a store that holds a run', async () => {
    const parent = await finishedRun();
    const to = new MemoryStore();
    const result = await forkRun({ from: parent, to });
    expect(result.state).toBe('done');
    expect((await to.load()).records).toHaveLength(result.records);
    const fork: ForkedRun = { header: (await to.load()).header, records: [], state: 'done', turn: 0, awaiting: null };
    expect(await createForked(to, fork)).toBe('exists');
  });

  it('leaves it to a store that writes forks in one step of its own', async () => {
    const parent = await finishedRun();
    const written: ForkedRun[] = [];
    const own = Object.assign(new MemoryStore(), { createFork: async (fork: ForkedRun) => (written.push(fork), 'created' as const) }) as RunStore;
    await forkRun({ from: parent, to: own });
    expect(written.map((fork) => [fork.state, fork.header.forkedFrom?.seq])).toEqual([['done', expect.any(Number)]]);
  });

  it('refuses to fork a run of a folder into a fleet (the fleet run takes its spec from its parent)', async () => {
    const parent = await finishedRun();
    const fleetLike = Object.assign(new MemoryStore(), { fleetRun: 'child-1', createFork: async () => 'created' as const }) as RunStore;
    await expect(forkRun({ from: parent, to: fleetLike })).rejects.toThrow(ForkRefusedError);
  });
});
