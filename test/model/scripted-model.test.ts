import { describe, expect, it } from 'vitest';
import type { Message } from '../../machines/agent-loop.types.ts';
import type { ModelRequest } from '../../src/model/model.ts';
import { endTurnReply, scriptedModel, ScriptExhaustedError, toolUseReply } from '../../src/model/scripted-model.ts';

/** The reply is chosen by the conversation: as many assistant messages as it holds, that reply of the script. */
const script = Array.from({ length: 6 }, (_, i) => toolUseReply([{ id: `toolu_${i}`, name: 'look', input: { i } }], `step ${i}`));
script.push(endTurnReply('done'));

function textOf(reply: { content: Array<{ type: string; text?: unknown }> }): unknown {
  return reply.content.find((block) => block.type === 'text')?.text;
}

function ask(messages: readonly Message[], earlierReplies?: number): ModelRequest {
  return { system: null, messages, tools: [], maxTokens: 1024, earlierReplies };
}

function assistant(i: number): Message {
  return { role: 'assistant', content: [{ type: 'text', text: `a${i}` }] };
}

function user(text: string): Message {
  return { role: 'user', content: text };
}

describe('scripted model: the reply follows where the conversation stands', () => {
  it('counts a conversation that grows by appended copies, as the machine builds it', async () => {
    const model = scriptedModel(script);
    let messages: Message[] = [user('task')];
    for (let step = 0; step < 6; step++) {
      const reply = await model.createMessage(ask(messages));
      expect(textOf(reply)).toBe(`step ${step}`);
      messages = messages.concat([assistant(step), user(`result ${step}`)]);
    }
    expect(textOf(await model.createMessage(ask(messages)))).toBe('done');
  });

  it('counts a list that is not the last one extended: a resumed copy, a cut, another conversation', async () => {
    const model = scriptedModel(script);
    const grown: Message[] = [user('task'), assistant(0), user('r0'), assistant(1), user('r1')];
    expect(textOf(await model.createMessage(ask(grown)))).toBe('step 2');
    // The same messages as new objects (a resumed process decodes its own).
    const decoded = grown.map((message) => ({ ...message }));
    expect(textOf(await model.createMessage(ask(decoded)))).toBe('step 2');
    // A shorter list that starts with the same first message.
    expect(textOf(await model.createMessage(ask(decoded.slice(0, 3))))).toBe('step 1');
    // A cut conversation: what compaction removed counts through earlierReplies.
    const cut: Message[] = [user('summary'), assistant(3), user('r3')];
    expect(textOf(await model.createMessage(ask(cut, 3)))).toBe('step 4');
    // Same length and same last message as the one before, a different first one: counted again.
    const other: Message[] = [assistant(9), cut[1]!, cut[2]!];
    expect(textOf(await model.createMessage(ask(other)))).toBe('step 2');
  });

  it('says which reply it was asked for past the script', async () => {
    const model = scriptedModel(script.slice(0, 1));
    const messages: Message[] = [user('task'), assistant(0), user('r0')];
    await expect(model.createMessage(ask(messages))).rejects.toBeInstanceOf(ScriptExhaustedError);
    await expect(model.createMessage(ask(messages))).rejects.toMatchObject({ requestedStep: 2, scriptLength: 1 });
  });
});
