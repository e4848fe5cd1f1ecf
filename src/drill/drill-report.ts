/** A drill's report in words: the lines the command prints, and the Markdown a user commits. */
import { type CallOutcome, type DrillReport, outcomeWords } from './drill.ts';

const ORDER: readonly CallOutcome[] = ['ran-twice', 'unknown-told-to-model', 'once-from-ledger', 'once-verified', 'once-verified-then-ran', 'once-idempotent-rerun', 'ran-again-read-only'];

/** Per tool: what happened at how many crash points, and the advice. */
export function drillLines(report: DrillReport): string[] {
  const lines = [`drill of ${report.agent} (version ${report.version}) on ${report.source}: ${report.points.length} crash points, ${report.seconds.toFixed(1)} s`];
  for (const tool of report.tools) {
    const said = ORDER.filter((outcome) => tool.outcomes[outcome]).map((outcome) => `${outcomeWords(outcome)} at ${tool.outcomes[outcome]} ${tool.outcomes[outcome] === 1 ? 'point' : 'points'}`);
    lines.push(`  ${tool.tool} (${tool.sideEffect ? 'side effect' : 'read-only'}): ${said.join('; ') || 'never left open by a crash'}`);
    if (tool.advice) lines.push(`    advice: ${tool.advice}`);
  }
  lines.push(report.ranTwice ? 'FAILED: a side effect happened twice (exit 1)' : 'every side effect happened once, or the model was told its state is unknown (exit 0)');
  return lines;
}

/** A point played again in a process of its own, killed by a real SIGKILL (sigkill-sample.ts). */
interface KilledForReal {
  point: string;
  agrees: boolean;
  problem: string | null;
  effects: Record<string, number>;
}

export function drillMarkdown(report: DrillReport & { sigkill?: readonly KilledForReal[] }): string {
  const killed = report.sigkill ?? [];
  const rows = report.calls.map((call) => `| ${call.point} | ${call.tool} | ${call.callId} | ${call.reconcile ?? '-'} | ${outcomeWords(call.outcome)} | ${call.effects} |`);
  return [
    `# Crash drill of ${report.agent}`,
    '',
    `Version ${report.version}, replies from ${report.source}; ${report.points.length} crash points, each played, killed there and resumed.`,
    '',
    '## By tool',
    '',
    ...drillLines(report).slice(1, -1).map((line) => (line.startsWith('    ') ? `  - ${line.trim()}` : `- ${line.trim()}`)),
    '',
    `**${drillLines(report).at(-1)}**`,
    '',
    '## By crash point',
    '',
    '| crash point | tool | call | reconcile | outcome | effects |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    ...(killed.length > 0
      ? [
          '## Killed by a real SIGKILL',
          '',
          '| crash point | as simulated | effects by call |',
          '|---|---|---|',
          ...killed.map((point) => `| ${point.point} | ${point.problem ?? (point.agrees ? 'yes' : 'NO')} | ${Object.entries(point.effects).map(([id, n]) => `${id}: ${n}`).join(', ')} |`),
          '',
        ]
      : []),
  ].join('\n');
}
