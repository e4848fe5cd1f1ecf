/**
 * npm run bench:compare -- --against REF [--quick] [--only turn|file|resume|fleet] [--write-docs]
 *
 * This tree against the tree at git REF, side by side: REF is checked out into a temporary
 * worktree (removed at the end, also on a failure or SIGINT), both trees' TypeScript is loaded
 * through tsx, and each benchmark runs the two in turn, repetition after repetition: CPU per turn
 * on the memory store (T = 50, 200, 1,000), the file store's turn (ms and fsyncs a turn, T = 50,
 * 200, real files with fsync), the resume of a finished 800-turn run (each tree's own journal, a
 * fresh process per resume), and a fleet of each tree's worker processes on a throwaway
 * PostgreSQL cluster (records per worker CPU second). Prints the medians and this ÷ REF, and
 * writes them to bench/results/compare.json; with --write-docs, also into the table of the docs'
 * performance page (compare/docs-table.ts). A benchmark REF has not the parts for is skipped,
 * said why. Timings inform; nothing here fails on them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Benchmark, CompareUsageError, parseCompareArgs } from './compare/args.ts';
import { DocsRegionError, docsTablePages, writeDocsTables } from './compare/docs-table.ts';
import { measureFleet } from './compare/fleet.ts';
import { type ComparePlan, FULL_PLAN, measureFileTurn, measureResume, measureTurnCpu, QUICK_PLAN, type Side } from './compare/measure.ts';
import { type CompareRun, compareReport, comparedRow, type Samples, type Skipped } from './compare/report.ts';
import { loadParts } from './compare/tree-parts.ts';
import { onExit } from './exit-cleanup.ts';
import { checkoutTree, describeCheckout } from './git-tree.ts';
import { installIoCounter } from './io-counter.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const RESULTS = fileURLToPath(new URL('./results/compare.json', import.meta.url));

type Measure = (sides: readonly [Side, Side], root: string, plan: ComparePlan, log: (line: string) => void) => Promise<Array<Samples | Skipped>>;

const BENCHMARKS: Record<Benchmark, { measure: Measure; title: string }> = {
  turn: { measure: measureTurnCpu, title: 'CPU per turn, memory store' },
  file: { measure: measureFileTurn, title: 'file-store turn' },
  resume: { measure: measureResume, title: 'resume of a finished run' },
  fleet: { measure: measureFleet, title: 'fleet, records per worker CPU second' },
};

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  let args: ReturnType<typeof parseCompareArgs>;
  try {
    args = parseCompareArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof CompareUsageError)) throw error;
    log(error.message);
    process.exitCode = 2;
    return;
  }
  if (args.writeDocs) {
    try {
      log(`--write-docs: the table of ${docsTablePages(REPO).join(' and ')} will be rewritten`);
    } catch (error) {
      if (!(error instanceof DocsRegionError)) throw error;
      log(error.message);
      process.exitCode = 2;
      return;
    }
  }
  const plan = args.quick ? QUICK_PLAN : FULL_PLAN;
  const started = Date.now();
  const loadAtStart = os.loadavg()[0]!;
  const ours = describeCheckout(REPO);
  const tree = checkoutTree(REPO, args.against, 'da-compare-');
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'da-compare-runs-'));
  const removeRoot = onExit(`the folder ${root}`, () => fs.rmSync(root, { recursive: true, force: true }));
  installIoCounter();
  const entries: Array<Samples | Skipped> = [];
  try {
    log(`bench:compare (${plan.name}): this tree (${ours}) against ${args.against} (${tree.commit}, checked out in ${tree.dir})`);
    for (const benchmark of args.only) {
      const mine = await loadParts(REPO, 'this tree', benchmark);
      if (!mine.ok) throw new Error(`${mine.missing}: this tree cannot run the ${benchmark} benchmark`);
      const theirs = await loadParts(tree.dir, `REF ${tree.commit}`, benchmark);
      if (!theirs.ok) {
        log(`  ${benchmark}: skipped, ${theirs.missing}`);
        entries.push({ benchmark, name: BENCHMARKS[benchmark].title, skipped: theirs.missing });
        continue;
      }
      const sides: [Side, Side] = [
        { key: 'ours', dir: REPO, parts: mine.parts },
        { key: 'ref', dir: tree.dir, parts: theirs.parts },
      ];
      entries.push(...(await BENCHMARKS[benchmark].measure(sides, root, plan, log)));
    }
  } finally {
    removeRoot();
    tree.remove();
  }
  const rows = entries.map(comparedRow);
  const run: CompareRun = {
    date: new Date(started).toISOString(),
    plan: plan.name,
    ours,
    ref: { given: args.against, commit: tree.commit },
    node: process.version,
    cores: os.cpus().length,
    seconds: (Date.now() - started) / 1000,
    load: { start: loadAtStart, end: os.loadavg()[0]! },
    rows,
  };
  const report = compareReport(run);
  console.log(report);
  const results = {
    generatedAt: new Date().toISOString(),
    machine: { node: process.version, cpus: os.cpus().length, platform: os.platform(), loadAtStart, loadAtEnd: run.load.end },
    seconds: run.seconds,
    ours: { commit: ours },
    ref: run.ref,
    plan,
    rows,
    samples: entries,
  };
  fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
  fs.writeFileSync(`${RESULTS}.tmp`, `${JSON.stringify(results, null, 2)}\n`);
  fs.renameSync(`${RESULTS}.tmp`, RESULTS);
  log(`figures written to ${path.relative(process.cwd(), RESULTS)}`);
  if (args.writeDocs) for (const page of writeDocsTables(REPO, report)) log(`table written into ${page}`);
}

await main();
