/**
 * npm run bench:langgraph [-- --quick]: only our durable loop against LangGraph.js on files
 * (langgraph-bench.ts), T = 50, 200 and 800; the full `npm run bench` prints the same section.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { installIoCounter } from './io-counter.ts';
import { langGraphLines, langGraphSection, langGraphTargets } from './langgraph-bench.ts';
import { targetLines } from './report.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-bench-langgraph-'));
installIoCounter();
try {
  const started = Date.now();
  const load = os.loadavg()[0]!;
  const report = await langGraphSection(root, process.argv.includes('--quick') ? 'quick' : 'full', true, log);
  console.log(
    `node ${process.version}, ${os.cpus().length} cores; ${((Date.now() - started) / 1000).toFixed(0)} s; load average ${load.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end`,
  );
  console.log(langGraphLines(report).join('\n'));
  const targets = langGraphTargets(report);
  if (targets.length > 0) console.log(targetLines(targets));
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
