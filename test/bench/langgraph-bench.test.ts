/**
 * The LangGraph comparison's schedule and report, with stand-in sides (the real LangGraph.js is
 * installed by the bench outside the repository, never by a test): warm-up first, then each T in
 * turn, the two sides taking turns to go first, each LangGraph run divided by ours of the same
 * repetition, every run's folder removed. Nothing here is timed.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type LangGraphFigures, langGraphLines, langGraphSection, langGraphTargets, type LangGraphSides, measureLangGraph } from '../../bench/langgraph-bench.ts';
import { LANGGRAPH_SETTING } from '../../bench/langgraph.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const versions = {
  '@langchain/langgraph': '1.7.3',
  '@langchain/langgraph-checkpoint-sqlite': '1.0.4',
  '@langchain/langgraph-checkpoint': '1.2.2',
  '@langchain/core': '1.4.0',
  'better-sqlite3': '12.11.1',
  sqlite: '3.53.2',
};

describe('LangGraph against ours', () => {
  it('warms both up, then interleaves every T, alternating who goes first, and divides each LangGraph run by ours of its repetition', async () => {
    const root = tempDir();
    const calls: string[] = [];
    const sides: LangGraphSides = {
      ours: async (dir, script) => {
        fs.mkdirSync(dir, { recursive: true });
        const turns = script.length - 1;
        calls.push(`ours ${turns}`);
        return { ms: turns, cpuMs: turns / 2 };
      },
      langGraph: async (dir, script) => {
        fs.mkdirSync(dir, { recursive: true });
        const turns = script.length - 1;
        calls.push(`langgraph ${turns}`);
        return { ms: turns * turns, cpuMs: turns, checkpoints: 2 * turns + 3, writes: 4 * turns + 3, fileBytes: 1000 * turns };
      },
    };
    const figures = await measureLangGraph(root, sides, { 4: 2, 10: 1 }, () => {}, [4, 10]);
    expect(calls).toEqual([
      ...Array.from({ length: 3 }, () => ['langgraph 50', 'ours 50']).flat(),
      'ours 4',
      'langgraph 4',
      'ours 10',
      'langgraph 10',
      'langgraph 4',
      'ours 4',
    ]);
    expect(figures.map((row) => [row.turns, row.reps, row.langGraphOverOurs, row.langGraphOverOursCpu, row.oursMsPerTurn, row.langGraphMsPerTurn])).toEqual([
      [4, 2, 4, 2, 1, 4],
      [10, 1, 10, 2, 1, 10],
    ]);
    expect(figures[1]).toMatchObject({ checkpointsPerTurn: 2.3, writesPerTurn: 4.3, langGraphFileBytes: 10_000 });
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('prints the versions and the setting measured, and judges the goal at every T', () => {
    const row = (turns: number, ratio: number): LangGraphFigures => ({
      turns,
      reps: 3,
      oursMsPerTurn: 1,
      oursCpuMsPerTurn: 0.5,
      langGraphMsPerTurn: ratio,
      langGraphCpuMsPerTurn: ratio / 2,
      langGraphOverOurs: ratio,
      langGraphOverOursCpu: ratio,
      checkpointsPerTurn: 2,
      writesPerTurn: 4,
      langGraphFileBytes: 2_500_000,
    });
    const report = { versions, figures: [row(50, 4.5), row(800, 60)] };
    const lines = langGraphLines(report);
    expect(lines[0]).toContain('@langchain/langgraph 1.7.3');
    expect(lines[0]).toContain('SQLite 3.53.2');
    expect(lines[1]).toBe(`  setting: ${LANGGRAPH_SETTING}`);
    expect(lines[3]).toContain('4.5× (4.5×)');
    expect(lines[4]).toContain('60.0×');
    expect(lines[4]).toContain('2.5 MB');
    expect(langGraphTargets(report)).toEqual([{ target: expect.stringContaining('at least 5×'), measured: 'T=50: 4.5×, T=800: 60.0×', met: false }]);
    expect(langGraphTargets({ versions, figures: [row(50, 5), row(800, 60)] })[0]!.met).toBe(true);
  });

  it('says why when LangGraph was left out, and judges nothing then', async () => {
    const report = await langGraphSection(tempDir(), 'quick', false, () => {});
    expect(report).toEqual({ skipped: 'not asked for (--no-langgraph)' });
    expect(langGraphLines(report)).toEqual(['LangGraph.js: skipped, not asked for (--no-langgraph)']);
    expect(langGraphTargets(report)).toEqual([]);
  });
});
