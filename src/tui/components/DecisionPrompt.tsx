/** @jsxRuntime automatic @jsxImportSource react */
/**
 * The live view's prompt for a call that waits for a person: y approves, n asks for the reason
 * of a denial, e edits the input (as JSON); a question takes its answer as a line of text; a
 * wait can only be stopped (n, with a reason), its event comes from `durable-agent signal`. The
 * decision goes through decide() like `durable-agent approve` from another terminal (checked,
 * then written to the inbox), so the run records it the same way, whichever came first.
 */
import { Box, Text, useInput } from 'ink';
import { useRef, useState } from 'react';
import type { DecideInput } from '../../awaits/decide.ts';
import type { PromptCall } from '../run-view.ts';
import { waitsForWords } from '../../awaits/wait-words.ts';

export type PromptDecide = (input: DecideInput) => Promise<void>;

type Mode = 'keys' | 'reason' | 'edit' | 'answer' | 'sent';

export function DecisionPrompt({ call, decide, by }: { call: PromptCall; decide: PromptDecide; by: string }) {
  const first: Mode = call.needs === 'answer' ? 'answer' : 'keys';
  // Keys can arrive faster than React renders (typed text and Enter in one read): the handler
  // works on refs, and the state only redraws.
  const state = useRef<{ mode: Mode; text: string; error: string | null }>({ mode: first, text: '', error: null });
  const [, redraw] = useState(0);
  const set = (change: Partial<{ mode: Mode; text: string; error: string | null }>) => {
    state.current = { ...state.current, ...change };
    redraw((n) => n + 1);
  };

  const send = (input: Omit<DecideInput, 'tool_use_id' | 'by'>, back: Mode) => {
    set({ mode: 'sent', error: null });
    decide({ ...input, tool_use_id: call.id, by }).catch((thrown: unknown) => {
      set({ mode: back, error: thrown instanceof Error ? thrown.message : String(thrown) });
    });
  };

  const enter = () => {
    const { mode, text } = state.current;
    if (mode === 'reason') send({ verdict: 'denied', reason: text }, 'reason');
    else if (mode === 'answer') send({ verdict: 'answered', text }, 'answer');
    else if (mode === 'edit') {
      let input: unknown;
      try {
        input = JSON.parse(text);
      } catch (thrown) {
        set({ error: `not JSON: ${(thrown as Error).message}` });
        return;
      }
      send({ verdict: 'approved', input }, 'edit');
    }
  };

  useInput((input, key) => {
    // Raw mode takes Ctrl-C from the terminal: hand it on as the interrupt it is.
    if (key.ctrl && input === 'c') {
      process.kill(process.pid, 'SIGINT');
      return;
    }
    const { mode, text } = state.current;
    if (mode === 'sent') return;
    if (mode === 'keys') {
      // A wait ends at its time or with its event: the one thing a person does here is stop it.
      if (input === 'y' && call.needs !== 'wait') send({ verdict: 'approved' }, 'keys');
      else if (input === 'n') set({ mode: 'reason', text: '', error: null });
      else if (input === 'e' && call.needs !== 'wait') set({ mode: 'edit', text: JSON.stringify(call.input) ?? '', error: null });
      return;
    }
    if (key.escape) set({ mode: first, text: '' });
    else if (key.return) enter();
    else if (key.backspace || key.delete) set({ text: text.slice(0, -1) });
    else if (input && !key.ctrl && !key.meta) {
      // Typed text and Enter can arrive in one read (a paste, a busy machine): the line ends there.
      const end = input.search(/[\r\n]/);
      set({ text: text + (end === -1 ? input : input.slice(0, end)) });
      if (end !== -1) enter();
    }
  });

  const { mode, text, error } = state.current;
  return (
    <Box flexDirection="column" marginTop={1} borderStyle="round" borderColor="yellow" paddingX={1}>
      <Text>
        <Text bold color="yellow">
          {call.needs === 'answer' ? 'question' : call.needs === 'wait' ? 'wait' : 'approval'}
        </Text>{' '}
        {call.id} {call.name}
        {call.question ? `: ${call.question}` : ''}
        {call.needs === 'wait' ? ` waits for ${waitsForWords(call)}` : ''}
      </Text>
      {call.needs === 'approval' ? <Text dimColor>{JSON.stringify(call.input)?.slice(0, 300)}</Text> : null}
      <Text>{call.needs === 'wait' && mode === 'keys' ? WAIT_KEYS : promptText(mode, text)}</Text>
      {error ? <Text color="red">{error}</Text> : null}
    </Box>
  );
}

const WAIT_KEYS = 'n stop the wait   (it ends at its time, or when `durable-agent signal --run ID EVENT` sends its event)';

function promptText(mode: Mode, text: string): string {
  switch (mode) {
    case 'keys':
      return 'y approve · n deny · e edit the input   (or decide from another terminal)';
    case 'reason':
      return `why (Enter to deny, Esc back): ${text}▏`;
    case 'edit':
      return `input as JSON (Enter to approve, Esc back): ${text}▏`;
    case 'answer':
      return `answer (Enter to send): ${text}▏`;
    case 'sent':
      return 'sent; the run takes it up…';
  }
}
