/**
 * Children side by side spend no more than their parent has left: each child's share is the
 * remainder split by the reply's sub-agent calls, and a child stops before a model call whose
 * worst case (its max_tokens plus the estimated input) would pass its share, so its last reply
 * cannot overshoot it. Scripted replies with fixed usage: the parent's first reply costs 120 of
 * its 500, each writer reply 100 (more than the 50 it may write, as a long input would cost).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { childRunIdOf, defineAgent, defineTool, FileRuns, openRun, startRun, subagentTool } from '../../src/index.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { totalTokens } from '../../machines/agent-loop.logic.ts';
import type { ModelReply, TokenUsage } from '../../machines/agent-loop.types.ts';
import { taskOf } from '../helpers/subagent-agents.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const PARENT = 'editor-1';
const usage = (input: number, output: number): TokenUsage => ({ input, output, cacheRead: 0, cacheWrite: 0 });
const costing = (reply: ModelReply, spent: TokenUsage): ModelReply => ({ ...reply, usage: spent });

function writer() {
  const note = defineTool<{ text: string }>({
    name: 'write_note',
    description: 'Write a note.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    readOnly: true,
    run: async () => 'written',
  });
  return defineAgent({
    name: 'writer',
    maxTokens: 50,
    model: scriptedModel(
      [
        (messages) => costing(toolUseReply([{ id: `toolu_w_${taskOf(messages).replace(/[^A-Za-z0-9]/g, '')}`, name: 'write_note', input: { text: taskOf(messages) } }]), usage(60, 40)),
        (messages) => costing(endTurnReply(`wrote "${taskOf(messages)}"`), usage(100, 40)),
      ],
      { name: 'scripted-writer' },
    ),
    tools: [note],
  });
}

function editor() {
  return defineAgent({
    name: 'editor',
    model: scriptedModel(
      [
        costing(
          toolUseReply([
            { id: 'toolu_a', name: 'writer', input: { task: 'note A' } },
            { id: 'toolu_b', name: 'writer', input: { task: 'note B' } },
          ]),
          usage(80, 40),
        ),
        (messages) => {
          const results = messages.flatMap((message) => (typeof message.content === 'string' ? [] : message.content.filter((block) => block.type === 'tool_result')));
          return costing(endTurnReply(`done: ${results.map((block) => JSON.stringify(block.content)).join(' / ')}`), usage(30, 20));
        },
      ],
      { name: 'scripted-editor' },
    ),
    tools: [subagentTool(writer())],
    budget: { maxTotalTokens: 500 },
  });
}

describe("sub-agents side by side and their parent's budget", () => {
  it('two children of one reply spend together no more than the parent has left; each stops before a call that could pass its share, and the parent is told why', async () => {
    const runs = new FileRuns(path.join(tempDir(), '.durable-agent'));
    const result = await startRun({ agent: editor(), store: runs.store(PARENT), task: 'Write two notes.', runId: PARENT });
    const parent = await openRun({ store: runs.store(PARENT) }).status();
    const children = await Promise.all(['toolu_a', 'toolu_b'].map((call) => openRun({ store: runs.store(childRunIdOf(PARENT, call)) }).status()));
    for (const child of children) {
      // Half of what the parent had left after its first reply (500 - 120).
      expect(child.budget?.maxTotalTokens).toBe(190);
      expect(child.state).toBe('stoppedAtBudget');
      // Its first call fitted (at most 50 written after a short input); its second, after 100 spent, could not.
      expect(totalTokens(child.usage)).toBe(100);
      expect(child.budgetStop).toMatchObject({ budget: 'tokens', spent: 100, limit: 190 });
      expect(100 + child.budgetStop!.nextCall!).toBeGreaterThan(190);
    }
    expect(totalTokens(children[0]!.usage) + totalTokens(children[1]!.usage)).toBeLessThanOrEqual(380);
    // The whole tree: the parent's own replies and its children's, charged once.
    expect(totalTokens(parent.usage)).toBeLessThanOrEqual(500);
    expect(result.status).toBe('done');
    for (const call of ['toolu_a', 'toolu_b']) expect(result.text).toContain(`run ${childRunIdOf(PARENT, call)}) ended stoppedAtBudget: its share of the parent run’s budget is spent (budget reached: 100 of 190 tokens, and the next model call could spend up to`);
  });
});
