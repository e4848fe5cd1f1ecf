/** `durable-agent demo`: the lesson's task, in a directory, crashable and resumable. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { demoFollowUp, demoScript, DEMO_TASK, type DemoWords, ensureSampleNotes } from '../../demo/demo-task.ts';
import { demoTools } from '../../demo/demo-tools.ts';
import { langOfLocale, wordsOf } from '../../lang/lang.ts';
import type { Model } from '../../model/model.ts';
import { scriptedModel } from '../../model/scripted-model.ts';
import { CrashPoints } from '../../runtime/crash-points.ts';
import { startRun } from '../../runtime/run-api.ts';
import { WriteFaultPlan } from '../../store/open-store.ts';
import type { DemoArgs } from '../args.ts';
import { driveCliRun } from '../drive-run.ts';
import { approvalResumeWords } from '../options/approval.ts';
import { EXIT } from '../exit-codes.ts';
import type { Writers } from '../plain-reporter.ts';
import { realModel } from '../real-model.ts';
import { cliCommand, dirWords } from '../../words/shell-command.ts';
import { modelSetupOf, storedRunOf } from '../model-setup.ts';
import { folderStoreAt, stateFolderOf } from '../run-store.ts';
import type { ToolDefinition } from '../../tools/tool.ts';

export async function demoCommand(args: DemoArgs, env: NodeJS.ProcessEnv, writers: Writers): Promise<number> {
  if (args.listCrashPoints) return listCrashPoints(writers);
  const dir = path.resolve(args.dir);
  // Chosen for this process only: the journal keeps no language, so a resume may speak another.
  const lang = args.lang ?? langOfLocale(env);
  const tools = demoTools(dir, { paceMs: args.paceMs, jitterMs: args.jitterMs, verify: args.verify });
  const { model, resumeWords } = await demoModel(args, env, dir, tools, writers, wordsOf(lang).demo);
  return driveCliRun({
    command: 'demo',
    dir,
    runId: args.runId,
    env,
    writers,
    model,
    tools,
    output: { plain: args.plain, verbose: args.verbose },
    // A language given is given again: the resume speaks as this process did.
    resumeCommand: cliCommand(env, ['demo', '--resume', ...dirWords(dir, args.runId), ...approvalResumeWords(args.approval, args.resume), ...resumeWords, ...(args.lang ? ['--lang', args.lang] : [])]),
    resume: args.resume ? { maxTurns: args.maxTurns, acceptLostRecord: args.acceptLostRecord, allowToolChange: args.allowToolChange, replaceDecisionPolicy: args.replaceDecisionPolicy, message: args.message } : null,
    start: args.resume
      ? null
      : {
          task: DEMO_TASK,
          system: null,
          fresh: args.fresh,
          maxTurns: args.maxTurns,
          prepare: () => ensureSampleNotes(dir, new WriteFaultPlan(env.DURABLE_AGENT_FAIL_WRITE)),
        },
    options: {
      maxTokens: args.maxTokens,
      takeOver: args.takeOver,
      budget: args.budget,
      compaction: args.compaction,
      clearToolUses: args.clearToolUses,
      requireApproval: args.approval.requireApproval,
      decisionTimeoutMs: args.approval.decisionTimeoutMs,
    },
    traceContent: args.traceContent,
    wait: args.approval.wait,
    lang,
  });
}

/** The scripted model, or with --model a real one asked as the run is pinned to (model-setup.ts). */
async function demoModel(
  args: DemoArgs,
  env: NodeJS.ProcessEnv,
  dir: string,
  tools: readonly ToolDefinition[],
  writers: Writers,
  words: DemoWords,
): Promise<{ model: Model; resumeWords: string[] }> {
  if (!args.model) {
    const model = scriptedModel(demoScript(words), { name: 'scripted-demo', paceMs: args.paceMs, jitterMs: args.jitterMs, afterScript: demoFollowUp(words) });
    return { model, resumeWords: [] };
  }
  const stored = await storedRunOf(dir, args.runId, args.resume, args.fresh);
  const setup = modelSetupOf(args.model, args.claude, stored, args.maxTokens, tools.map((tool) => tool.name));
  const model = await realModel(args.model, env, args.request, undefined, true, setup.options);
  for (const note of setup.notes) writers.err(note);
  return { model, resumeWords: ['--model', args.model, ...setup.resumeWords] };
}

/** Runs the whole demo in a scratch directory and prints every crash label it passed, in order. */
async function listCrashPoints(writers: Writers): Promise<number> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-points-'));
  try {
    ensureSampleNotes(scratch);
    const crashPoints = new CrashPoints(undefined);
    await startRun({
      store: folderStoreAt(stateFolderOf(scratch)),
      model: scriptedModel(demoScript(), { name: 'scripted-demo' }),
      tools: demoTools(scratch),
      task: DEMO_TASK,
      crashPoints,
      command: 'demo',
    });
    for (const label of crashPoints.passed) writers.out(label);
    return EXIT.done;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
