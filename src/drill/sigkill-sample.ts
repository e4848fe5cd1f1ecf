/**
 * A sample of a drill's crash points played again with a real SIGKILL: the agent in a process of
 * its own (drill-child.ts), killed at the point by the kernel — nothing flushed, nothing unwound —
 * then resumed in another, its effects counted as the simulated play counted them. A point whose
 * effects differ from the simulated play's is reported: the simulation missed something.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ModelReply } from '../../machines/agent-loop.types.ts';
import { idempotencyKeyFor } from '../tools/execute-call.ts';
import { readOnlyFor } from '../tools/tool.ts';
import { openStore } from '../store/open-store.ts';
import type { ChildPlay } from './drill-child.ts';
import type { DrillOptions, DrillReport } from './drill.ts';

const EXECUTIONS_FILE = '.drill-executions';

export interface SigkillPoint {
  point: string;
  /** By side-effecting call id: how many times its effect happened after the kill and the resume. */
  effects: Record<string, number>;
  /** The simulated play of the point counted the same. */
  agrees: boolean;
  /** Set when the play did not go as a kill and a resume should (the child's exit, what it said). */
  problem: string | null;
}

/** Up to `count` points where a side effect is open or just recorded, spread over the path, and the last. */
export function samplePoints(points: readonly string[], count: number): string[] {
  const risky = points.filter((point) => /^after-(tool-return|effect-write|save-done):/.test(point));
  if (risky.length <= count) return risky;
  const step = (risky.length - 1) / (count - 1);
  return [...new Set(Array.from({ length: count }, (_, at) => risky[Math.round(at * step)]!))];
}

export async function sigkillSample(
  options: DrillOptions & { module: string },
  report: DrillReport,
  points: readonly string[],
): Promise<SigkillPoint[]> {
  const child = childScript();
  const replies = options.replies.map((reply: ModelReply) => ({ stop_reason: reply.stop_reason, content: reply.content }));
  const sideEffects = options.replies
    .flatMap((reply) => reply.content.filter((block) => block.type === 'tool_use'))
    .filter((block) => {
      const tool = options.agent.tools.find((candidate) => candidate.name === block.name);
      return !tool || !readOnlyFor(tool, block.input);
    })
    .map((block) => ({ id: String(block.id), name: String(block.name) }));
  const results: SigkillPoint[] = [];
  for (const point of points) {
    const dir = fs.mkdtempSync(path.join(options.scratchRoot ?? os.tmpdir(), 'durable-agent-drill-kill-'));
    try {
      await options.setup?.({ dir });
      const play = (killAt: string | null) => {
        const arg: ChildPlay = { module: options.module, agent: options.agent.name, replies, task: options.task ?? `Drill of ${options.agent.name}`, dir, killAt };
        return spawnSync(process.execPath, [...child.execArgv, child.file, JSON.stringify(arg)], { encoding: 'utf8', timeout: 60_000 });
      };
      const killed = play(point);
      const resumed = killed.signal === 'SIGKILL' ? play(null) : null;
      const problem =
        killed.signal !== 'SIGKILL'
          ? `the process was not killed at ${point} (exit ${killed.status}${killed.stderr ? `: ${killed.stderr.trim().split('\n').at(-1)}` : ''})`
          : resumed!.status !== 0
            ? `the resume after the kill exited ${resumed!.status}${resumed!.stderr ? `: ${resumed!.stderr.trim().split('\n').at(-1)}` : ''}`
            : null;
      const runId = (await openStore({ dir: path.join(dir, '.durable-agent') }).load()).header.runId;
      const executions = fs.existsSync(path.join(dir, EXECUTIONS_FILE)) ? fs.readFileSync(path.join(dir, EXECUTIONS_FILE), 'utf8').split('\n').filter(Boolean) : [];
      const effects: Record<string, number> = {};
      for (const call of sideEffects) {
        const key = idempotencyKeyFor(runId, call.id);
        effects[call.id] = options.count ? await options.count({ tool: call.name, idempotencyKey: key, dir }) : executions.filter((line) => line === key).length;
      }
      const simulatedTwice = new Set(report.calls.filter((call) => call.point === point && call.outcome === 'ran-twice').map((call) => call.callId));
      const agrees = sideEffects.every((call) => (effects[call.id]! > 1) === simulatedTwice.has(call.id));
      results.push({ point, effects, agrees, problem });
    } finally {
      await options.teardown?.({ dir });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return results;
}

/** The child's script beside this one, and how to run it: compiled, or through tsx from the sources. */
function childScript(): { file: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  const extension = path.extname(here);
  const file = path.join(path.dirname(here), `drill-child${extension}`);
  return { file, execArgv: extension === '.ts' ? ['--import', 'tsx'] : [] };
}

