/**
 * A sealed run's sub-agent calls start their runs beside it sealed with the same keys: the task the
 * calling run's model wrote for a child, the child's tool inputs and its answer are nowhere in the
 * folder in plain; the calling run reads each child's answer with its keys; without them the
 * children still list, and a child's transcript is refused naming the key.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineAgent, defineTool, FileRuns, listRuns, startRun, subagentTool } from '../../src/index.ts';
import { readRunTranscript } from '../../src/runtime/run-transcript.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/testing.ts';
import { KeyRing } from '../../src/seal/keys.ts';
import { KeyNotGivenError } from '../../src/seal/seal-errors.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { folderText } from '../helpers/folder-text.ts';

const SECRETS = ['Ana Ortega', 'account 4471', 'balance 912.40'];


const lookup = defineTool<{ q: string }>({
  name: 'lookup',
  description: 'Look something up.',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  readOnly: true,
  run: () => 'balance 912.40',
});

const researcher = defineAgent({
  name: 'researcher',
  model: scriptedModel([toolUseReply([{ id: 'toolu_r', name: 'lookup', input: { q: 'account 4471 of Ana Ortega' } }]), endTurnReply('Ana Ortega: balance 912.40')], { name: 'scripted-researcher' }),
  tools: [lookup],
});

const editor = defineAgent({
  name: 'editor',
  model: scriptedModel(
    [
      toolUseReply([{ id: 'toolu_a', name: 'researcher', input: { task: 'Find the balance of account 4471 for Ana Ortega.' } }]),
      (messages) => endTurnReply(`told: ${JSON.stringify(messages.at(-1)!.content)}`),
    ],
    { name: 'scripted-editor' },
  ),
  tools: [subagentTool(researcher)],
});

describe('a sealed run and the runs its sub-agent calls start', () => {
  it('seals the children with the same keys; the parent reads their answers; without keys they list and their transcripts are refused', async () => {
    const dir = tempDir();
    const runs = new FileRuns(path.join(dir, '.durable-agent'));
    const keys = KeyRing.of([{ id: 'k1', key: randomBytes(32) }]);
    const result = await startRun({ agent: editor, store: runs.store('editor-1'), task: 'Tell me what Ana Ortega has.', runId: 'editor-1', keys });
    expect(result.status).toBe('done');
    expect(result.text).toContain('balance 912.40');

    const text = folderText(path.join(dir, '.durable-agent'));
    for (const secret of SECRETS) expect(text, secret).not.toContain(secret);
    const listed = await listRuns(runs);
    const child = listed.find((run) => run.runId !== 'editor-1')!;
    expect(child).toMatchObject({ state: 'done', calledBy: { runId: 'editor-1', toolUseId: 'toolu_a' } });
    // Read without keys: what finds and operates it reads, its header names its run key.
    expect((await runs.store(child.runId).load()).header.sealed).toEqual(expect.any(String));
    await expect(readRunTranscript(runs.store(child.runId))).rejects.toBeInstanceOf(KeyNotGivenError);
    const opened = runs.store(child.runId);
    opened.giveKeys(keys);
    expect(JSON.stringify((await readRunTranscript(opened)).entries)).toContain('account 4471 of Ana Ortega');
  });
});
