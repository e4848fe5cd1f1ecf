/** `durable-agent drill`: the user's agent crash-tested at every crash point of a path. */
import fs from 'node:fs';
import path from 'node:path';
import { type DrillOptions, type DrillScratch, drillAgent } from '../../drill/drill.ts';
import { drillLines, drillMarkdown } from '../../drill/drill-report.ts';
import { samplePoints, sigkillSample } from '../../drill/sigkill-sample.ts';
import { DrillScriptError, recordedReplies, scriptReplies } from '../../drill/drill-script.ts';
import { foldJournal } from '../../store/journal/fold-journal.ts';
import { AgentsModuleError, loadAgentsModule, pickAgent } from '../agents-module.ts';
import type { DrillArgs } from '../specs/drill.ts';
import { fileStoreOf } from '../run-store.ts';
import { requireContent } from '../../store/open-store.ts';
import type { Writers } from '../plain-reporter.ts';

export async function drillCommand(args: DrillArgs, writers: Writers, cwd = process.cwd()): Promise<number> {
  const { agents, exported } = await loadAgentsModule(args.agents, cwd);
  const agent = pickAgent(agents, args.agents, args.agent);
  const { replies, source, task } = await repliesOf(args, cwd);
  const hooks = hooksOf(exported, args.agents);
  const home = process.cwd();
  const options: DrillOptions = {
    agent,
    replies,
    source,
    task,
    // Each play's scratch folder is the tools' working directory, as a fresh project would be.
    setup: async (scratch: DrillScratch) => {
      process.chdir(scratch.dir);
      await hooks.setup?.(scratch);
    },
    teardown: async (scratch: DrillScratch) => {
      try {
        await hooks.teardown?.(scratch);
      } finally {
        process.chdir(home);
      }
    },
    count: hooks.count,
    onProgress: args.json ? undefined : (line) => writers.err(line),
  };
  const drilled = await drillAgent(options);
  const sampled = samplePoints(drilled.points, args.sigkillPoints);
  const sigkill = sampled.length === 0 ? [] : await sigkillSample({ ...options, module: path.resolve(cwd, args.agents) }, drilled, sampled);
  for (const point of sigkill) if (!args.json) writers.err(`[drill] ${point.point} with a real SIGKILL: ${point.problem ?? (point.agrees ? 'as simulated' : 'NOT as simulated')} (effects: ${JSON.stringify(point.effects)})`);
  const failedForReal = sigkill.some((point) => !point.agrees || point.problem !== null || Object.values(point.effects).some((n) => n > 1));
  const report = { ...drilled, sigkill, exitCode: drilled.exitCode === 1 || failedForReal ? (1 as const) : (0 as const) };
  if (args.out) {
    const out = path.resolve(cwd, args.out);
    fs.writeFileSync(out, drillMarkdown(report));
    fs.writeFileSync(out.replace(/(\.md)?$/, '.json'), `${JSON.stringify(report, null, 2)}\n`);
  }
  if (args.json) writers.out(JSON.stringify(report, null, 2));
  else {
    for (const line of drillLines(report).slice(0, -1)) writers.out(line);
    if (sigkill.length > 0) writers.out(`  real SIGKILL at ${sigkill.length} sampled ${sigkill.length === 1 ? 'point' : 'points'} (${sigkill.map((point) => point.point).join(', ')}): ${failedForReal ? 'NOT as simulated, see above' : 'each as simulated'}`);
    writers.out(failedForReal && drilled.exitCode === 0 ? 'FAILED: a play killed by a real SIGKILL did not go as simulated (exit 1)' : drillLines(report).at(-1)!);
  }
  return report.exitCode;
}

async function repliesOf(args: DrillArgs, cwd: string) {
  if (args.repliesFile !== undefined) {
    const file = path.resolve(cwd, args.repliesFile);
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (error) {
      throw new DrillScriptError(args.repliesFile, `it cannot be read as JSON (${(error as Error).message})`);
    }
    return { replies: scriptReplies(parsed, args.repliesFile), source: args.repliesFile, task: undefined };
  }
  const store = fileStoreOf(args.dir, args.fromRun!);
  const source = `the run ${args.fromRun} in ${store.location}`;
  if (!(await store.exists())) throw new DrillScriptError(source, 'there is no such run (durable-agent list --dir DIR lists them)');
  const view = foldJournal(store.location, requireContent(await store.load()));
  return { replies: recordedReplies(view.context.messages, source), source, task: view.context.task };
}

/** What a drill takes from the module besides its agents; a hook that is not a function is refused. */
function hooksOf(exported: Record<string, unknown>, file: string): Pick<DrillOptions, 'setup' | 'teardown' | 'count'> {
  const hooks: Pick<DrillOptions, 'setup' | 'teardown' | 'count'> = {};
  for (const name of ['setup', 'teardown', 'count'] as const) {
    const value = exported[name];
    if (value === undefined) continue;
    if (typeof value !== 'function') throw new AgentsModuleError(file, `its export ${name} is not a function`);
    (hooks as Record<string, unknown>)[name] = value;
  }
  return hooks;
}
