/**
 * A sub-agent tool whose input declares fields besides its task: the model sees them in the
 * tool's schema, a call that lacks a required one is refused as any invalid input is (no child
 * started), and the child reads them with its task — as JSON in an <input> block by default, or
 * as the tool's taskOf makes its task. A field named "task" is refused when the tool is made.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineAgent, FileRuns, listRuns, startRun, subagentTool } from '../../src/index.ts';
import { SubagentInputError } from '../../src/errors.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import type { Message } from '../../machines/agent-loop.types.ts';
import { toolResultOf } from '../helpers/messages.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const firstMessage = (messages: readonly Message[]) => (typeof messages[0]!.content === 'string' ? messages[0]!.content : JSON.stringify(messages[0]!.content));

/** A reviewer that answers with the task it was given, word for word. */
const reviewer = defineAgent({ name: 'reviewer', model: scriptedModel([(messages) => endTurnReply(`task was: ${firstMessage(messages)}`)], { name: 'scripted-reviewer' }), tools: [] });

const INPUT = { properties: { files: { type: 'array', items: { type: 'string' } }, strict: { type: 'boolean' } }, required: ['files'] };

describe('a sub-agent tool with more input than its task', () => {
  it('shows the fields in its schema and gives them to the child with its task', async () => {
    const tool = subagentTool(reviewer, { input: INPUT });
    expect(tool.inputSchema).toEqual({
      type: 'object',
      properties: { task: { type: 'string', description: 'what the sub-agent is to do' }, files: INPUT.properties.files, strict: INPUT.properties.strict },
      required: ['task', 'files'],
    });
    const runs = new FileRuns(path.join(tempDir(), '.durable-agent'));
    let seen: readonly Message[] = [];
    const watching = defineAgent({
      name: 'editor',
      model: scriptedModel(
        [toolUseReply([{ id: 'toolu_r', name: 'reviewer', input: { task: 'Review these.', files: ['a.ts', 'b.ts'], strict: true } }]), (messages) => ((seen = messages), endTurnReply('reviewed'))],
        { name: 'scripted-editor' },
      ),
      tools: [tool],
    });
    expect((await startRun({ agent: watching, store: runs.store('ed-1'), runId: 'ed-1', task: 'Review.' })).status).toBe('done');
    const result = toolResultOf(seen, 'toolu_r');
    expect(result?.is_error).toBeFalsy();
    expect(result?.content).toBe(`task was: Review these.\n\n<input>\n${JSON.stringify({ files: ['a.ts', 'b.ts'], strict: true }, null, 2)}\n</input>`);
  });

  it('refuses a call without a required field as invalid input: no child run is started', async () => {
    const runs = new FileRuns(path.join(tempDir(), '.durable-agent'));
    let seen: readonly Message[] = [];
    const tool = subagentTool(reviewer, { input: INPUT });
    const watching = defineAgent({
      name: 'editor',
      model: scriptedModel([toolUseReply([{ id: 'toolu_r', name: 'reviewer', input: { task: 'Review.' } }]), (messages) => ((seen = messages), endTurnReply('reviewed'))], { name: 'scripted-editor' }),
      tools: [tool],
    });
    const result = await startRun({ agent: watching, store: runs.store('ed-2'), runId: 'ed-2', task: 'Review.' });
    expect(result.status).toBe('done');
    const refused = toolResultOf(seen, 'toolu_r');
    expect(refused?.is_error).toBe(true);
    expect(JSON.stringify(refused?.content)).toContain('files');
    expect((await listRuns(runs)).map((run) => run.runId)).toEqual(['ed-2']);
  });

  it('makes the task with taskOf when given', async () => {
    const runs = new FileRuns(path.join(tempDir(), '.durable-agent'));
    let seen: readonly Message[] = [];
    const tool = subagentTool(reviewer, { input: INPUT, taskOf: ({ task, files }) => `${task} Files: ${(files as string[]).join(', ')}.` });
    const watching = defineAgent({
      name: 'editor',
      model: scriptedModel([toolUseReply([{ id: 'toolu_r', name: 'reviewer', input: { task: 'Review these.', files: ['a.ts'] } }]), (messages) => ((seen = messages), endTurnReply('reviewed'))], { name: 'scripted-editor' }),
      tools: [tool],
    });
    await startRun({ agent: watching, store: runs.store('ed-3'), runId: 'ed-3', task: 'Review.' });
    expect(toolResultOf(seen, 'toolu_r')?.content).toBe('task was: Review these. Files: a.ts.');
  });

  it('refuses a field named task when the tool is made', () => {
    expect(() => subagentTool(reviewer, { input: { properties: { task: { type: 'number' } } } })).toThrow(SubagentInputError);
    expect(() => subagentTool(reviewer, { input: { properties: { task: { type: 'number' } } } })).toThrow(/name "task", which is the child's task itself/);
  });
});
