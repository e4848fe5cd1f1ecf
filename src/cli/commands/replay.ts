/** `durable-agent replay`: a stored run put to the agent's current code. */
import { DrillScriptError } from '../../drill/drill-script.ts';
import { replayLines, replayRun } from '../../drill/replay.ts';
import { loadAgentsModule, pickAgent } from '../agents-module.ts';
import type { Writers } from '../plain-reporter.ts';
import { fileStoreOf } from '../run-store.ts';
import type { ReplayArgs } from '../specs/replay.ts';

export async function replayCommand(args: ReplayArgs, writers: Writers, cwd = process.cwd()): Promise<number> {
  const { agents } = await loadAgentsModule(args.agents, cwd);
  const agent = pickAgent(agents, args.agents, args.agent);
  const store = fileStoreOf(args.dir, args.fromRun);
  if (!(await store.exists())) throw new DrillScriptError(`the run ${args.fromRun} in ${store.location}`, 'there is no such run (durable-agent list --dir DIR lists them)');
  const home = process.cwd();
  const report = await replayRun({
    agent,
    store,
    runTools: args.runTools,
    // The tools' working directory is the scratch folder, as in a drill.
    setup: ({ dir }) => process.chdir(dir),
    teardown: () => process.chdir(home),
  });
  if (args.json) writers.out(JSON.stringify(report, null, 2));
  else for (const line of replayLines(report)) writers.out(line);
  return report.exitCode;
}
