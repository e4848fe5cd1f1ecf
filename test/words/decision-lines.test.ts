/**
 * The lines about decisions, as the plain output and the live view print them: the waiting call
 * with the exact commands that decide it (quoted to paste), the decision taken up, the resume.
 */
import { describe, expect, it } from 'vitest';
import { decisionCommandsFor } from '../../src/words/decision-lines.ts';
import { plainReporter } from '../../src/cli/plain-reporter.ts';
import type { RunEvent } from '../../src/core/run-events.ts';
import { activityText, endingText } from '../../src/tui/format.ts';
import { initialView, reduceView } from '../../src/tui/run-view.ts';

const call = { id: 'toolu_03', name: 'write_report', input: { content: 'x' }, readOnly: false };
const question = { id: 'toolu_04', name: 'ask_user', input: { question: 'Which year?' }, readOnly: true };
const env = { PATH: '', npm_command: undefined };
const commands = decisionCommandsFor(env, "/tmp/it's here", "npx --no-install durable-agent demo --resume --dir '/tmp/it'\\''s here'");

const events: RunEvent[] = [
  { type: 'waiting', call, needs: 'approval', since: 1, question: null },
  { type: 'decided', call, decision: { tool_use_id: 'toolu_03', verdict: 'approved', by: 'ana', at: 2 } },
  { type: 'waiting', call: question, needs: 'answer', since: 3, question: 'Which year?' },
  { type: 'decided', call: question, decision: { tool_use_id: 'toolu_04', verdict: 'answered', by: 'ana', at: 4, text: '2024' } },
  { type: 'decided', call, decision: { tool_use_id: 'toolu_03', verdict: 'denied', by: 'deadline', at: 5, reason: 'no decision within 2h' } },
  { type: 'decided', call, decision: { tool_use_id: 'toolu_03', verdict: 'approved', by: 'bo', at: 6, input: { content: 'y' }, note: 'shorter' } },
];

const EXPECTED = [
  '[approval] toolu_03 write_report waits for a decision',
  "  approve: npx --no-install durable-agent approve --dir '/tmp/it'\\''s here' toolu_03",
  "  deny:    npx --no-install durable-agent deny --dir '/tmp/it'\\''s here' toolu_03 --reason 'TEXT'",
  '[decided] toolu_03 write_report approved by ana',
  '[question] toolu_04 ask_user: Which year?',
  "  answer:  npx --no-install durable-agent answer --dir '/tmp/it'\\''s here' toolu_04 'TEXT'",
  "  deny:    npx --no-install durable-agent deny --dir '/tmp/it'\\''s here' toolu_04 --reason 'TEXT'",
  '[decided] toolu_04 ask_user answered by ana: 2024',
  '[decided] toolu_03 write_report denied by deadline: no decision within 2h',
  '[decided] toolu_03 write_report approved by bo with edited input (shorter)',
];

describe('decision lines', () => {
  it('the plain output prints the waiting call, the commands that decide it, and each decision', () => {
    const out: string[] = [];
    const report = plainReporter({ out: (line) => out.push(line), err: () => {} }, false, commands);
    for (const event of events) report(event);
    expect(out).toEqual(EXPECTED);
  });

  it('a run that stops for a decision ends with the command that resumes it', () => {
    const out: string[] = [];
    const report = plainReporter({ out: (line) => out.push(line), err: () => {} }, false, commands);
    const waiting = { runId: 'r', tool_use_id: 'toolu_03', name: 'write_report', input: {}, needs: 'approval' as const, since: 1, awaited: true };
    report({ type: 'finished', result: { runId: 'r', status: 'waiting', waiting: [waiting], text: null, failure: null, turn: 3, maxTurns: 20, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } } });
    expect(out[0]).toMatch(/^\[waiting\] toolu_03 /);
    expect(out[1]).toBe(`  resume:  npx --no-install durable-agent demo --resume --dir '/tmp/it'\\''s here'`);
  });

  it('the live view logs the same lines', () => {
    let view = initialView({ verbose: false, resumeHint: commands.resume, task: null, decisionCommands: commands });
    for (const event of events) view = reduceView(view, { type: 'event', event, at: 0 });
    expect(view.log.map((entry) => entry.text)).toEqual(EXPECTED);
  });

  it('the live view says the run waits for a person, and a run that stopped for one is not "failed"', () => {
    let view = initialView({ verbose: false, resumeHint: commands.resume, task: null, decisionCommands: commands });
    view = reduceView(view, { type: 'event', event: events[0]!, at: 0 });
    expect(view.prompt).toEqual({ id: 'toolu_03', name: 'write_report', input: { content: 'x' }, needs: 'approval', question: null, since: 1 });
    expect(activityText(view, 65_001)).toBe("waiting for a person's decision on write_report toolu_03 · 1 min 05 s");
    const waiting = { runId: 'r', tool_use_id: 'toolu_03', name: 'write_report', input: {}, needs: 'approval' as const, since: 1, awaited: true };
    const result = { runId: 'r', status: 'waiting' as const, waiting: [waiting], text: null, failure: null, turn: 3, maxTurns: 20, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } };
    const ended = reduceView(view, { type: 'event', event: { type: 'finished', result }, at: 0 });
    expect(ended.prompt).toBeNull();
    expect(endingText(ended)).toEqual({ parts: ['‖ waiting for a person (exit 7)', 'write_report toolu_03', 'decide it (approve, deny, answer), then resume'], tone: 'warn' });
    expect(reduceView(view, { type: 'event', event: events[1]!, at: 0 }).prompt).toBeNull();
  });

  it('a wait is no decision: the live view says what it waits for, and a run stopped at one is resumed, not decided', () => {
    let view = initialView({ verbose: false, resumeHint: commands.resume, task: null, decisionCommands: commands });
    const call = { id: 'toolu_w1', name: 'wait', input: { event: 'deploy-done' }, readOnly: false };
    view = reduceView(view, { type: 'event', event: { type: 'waiting', call, needs: 'wait', question: null, since: 1 }, at: 0 });
    expect(activityText(view, 5_001)).toBe('wait toolu_w1 waits for event deploy-done · 5.0 s');
    const waiting = { runId: 'r', tool_use_id: 'toolu_w1', name: 'wait', input: call.input, needs: 'wait' as const, since: 1, awaited: true };
    const result = { runId: 'r', status: 'waiting' as const, waiting: [waiting], text: null, failure: null, turn: 1, maxTurns: 20, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } };
    const ended = reduceView(view, { type: 'event', event: { type: 'finished', result }, at: 0 });
    expect(endingText(ended)).toEqual({ parts: ['‖ waiting for its time or its event (exit 7)', 'wait toolu_w1', 'resume with --resume (before then, it waits the rest)'], tone: 'warn' });
  });
});
