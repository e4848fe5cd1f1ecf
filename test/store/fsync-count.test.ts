/**
 * What a turn asks of the disk, counted on the real file store by wrapping node:fs: the rule
 * needs checkpoint A durable before the tool runs and the ledger entry durable before the next
 * model call, so a one-call turn costs two fsyncs (A; the entry and B together).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { resumeRun, startRun } from '../../src/runtime/run-api.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { SimulatedCrash } from '../../src/runtime/crash-points.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { defineTool } from '../../src/tools/tool.ts';
import { countFileSyncs } from '../helpers/count-file-syncs.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const lookup = defineTool<{ q: string }>({
  name: 'lookup',
  description: 'read-only',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  readOnly: true,
  run: ({ q }) => `answer to ${q}`,
});

/**
 * Each saved record as "point: fsyncs", the fsyncs made since the record before it (a record's
 * own fsync comes before its saved event); "(written)": saved without waiting for the disk.
 */
function countSyncs() {
  const steps: string[] = [];
  const syncsSince = countFileSyncs();
  let counted = 0;
  const observer = (event: RunEvent) => {
    if (event.type !== 'saved') return;
    steps.push(`${event.point}${event.durable ? '' : ' (written)'}: ${syncsSince() - counted}`);
    counted = syncsSince();
  };
  return { steps, observer };
}

afterEach(() => vi.restoreAllMocks());

describe('fsyncs per turn on the file store', () => {
  it('a one-call turn costs two fsyncs: checkpoint A, then the ledger entry and checkpoint B together', async () => {
    const dir = tempDir();
    const { steps, observer } = countSyncs();
    const model = scriptedModel([
      toolUseReply([{ id: 't1', name: 'lookup', input: { q: 'a' } }]),
      toolUseReply([{ id: 't2', name: 'lookup', input: { q: 'b' } }]),
      toolUseReply([{ id: 't3', name: 'lookup', input: { q: 'c' } }]),
      endTurnReply('done'),
    ]);
    const result = await startRun({ store: new FileStore(path.join(dir, '.durable-agent')), model, tools: [lookup], task: 't', maxTurns: 3, observer });
    expect(result.status).toBe('done');
    // The journal's creation syncs the file, its directory, and the folder that now names .durable-agent;
    // each turn then A, and B (which makes the entry durable too).
    const turn = ['model-reply (written): 0', 'save-a: 1', 'effect-write (written): 0', 'save-b: 1'];
    expect(steps).toEqual(['save-start: 3', ...turn, ...turn, ...turn, 'model-reply (written): 0', 'save-done: 1']);
  });

  it('a turn of two calls costs three: the first entry before the second call runs, the last with B', async () => {
    const dir = tempDir();
    const { steps, observer } = countSyncs();
    const model = scriptedModel([
      toolUseReply([
        { id: 't1', name: 'lookup', input: { q: 'a' } },
        { id: 't2', name: 'lookup', input: { q: 'b' } },
      ]),
      endTurnReply('done'),
    ]);
    await startRun({ store: new FileStore(path.join(dir, '.durable-agent')), model, tools: [lookup], task: 't', maxTurns: 1, observer });
    expect(steps).toEqual(['save-start: 3', 'model-reply (written): 0', 'save-a: 1', 'effect-write: 1', 'effect-write (written): 0', 'save-b: 1', 'model-reply (written): 0', 'save-done: 1']);
  });

  it('a kill right after the last entry keeps it (written, not yet fsynced): the resume reuses it', async () => {
    const dir = tempDir();
    const model = () => scriptedModel([toolUseReply([{ id: 't1', name: 'lookup', input: { q: 'a' } }]), endTurnReply('done')]);
    let runs = 0;
    const counted = defineTool<{ q: string }>({ ...lookup, run: ({ q }) => `answer ${++runs} to ${q}` });
    const store = () => new FileStore(path.join(dir, '.durable-agent'));
    const crashed = await startRun({ store: store(), model: model(), tools: [counted], task: 't', crashAfter: 'after-effect-write:1' }).catch((e: unknown) => e);
    expect(crashed).toBeInstanceOf(SimulatedCrash);
    const events: RunEvent[] = [];
    const result = await resumeRun({ store: store(), model: model(), tools: [counted], observer: (event) => events.push(event) });
    expect(result.status).toBe('done');
    expect(runs).toBe(1);
    expect(events.find((event) => event.type === 'reconciled')).toMatchObject({ decision: 'reused' });
  });

  it('a run made in folders that did not exist makes each one durable in the folder above it', async () => {
    const root = tempDir();
    const synced: string[] = [];
    const pathOf = new Map<number, string>();
    const realOpen = fs.openSync.bind(fs);
    vi.spyOn(fs, 'openSync').mockImplementation(((file: fs.PathLike, ...rest: unknown[]) => {
      const fd = (realOpen as (...args: unknown[]) => number)(file, ...rest);
      pathOf.set(fd, String(file));
      return fd;
    }) as typeof fs.openSync);
    const realSync = fs.fsyncSync.bind(fs);
    vi.spyOn(fs, 'fsyncSync').mockImplementation((fd: number) => {
      synced.push(pathOf.get(fd) ?? `fd ${fd}`);
      realSync(fd);
    });
    const project = path.join(root, 'a', 'project');
    const result = await startRun({ store: new FileStore(path.join(project, '.durable-agent')), model: scriptedModel([endTurnReply('done')]), tools: [lookup], task: 't' });
    expect(result.status).toBe('done');
    // a in root, project in a, .durable-agent in project; the journal's own name in .durable-agent.
    expect(synced).toEqual(expect.arrayContaining([root, path.join(root, 'a'), project, path.join(project, '.durable-agent')]));
  });
});
