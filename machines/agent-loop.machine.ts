/**
 * The agent loop as an explicit state machine.
 *
 *   awaitingModel ─MODEL_REPLY(tool_use)→ pendingTool (checkpoint A)
 *   pendingTool ─TOOL_RESULT→ effectRecorded (the outcome is in the ledger) ─TOOL_RESULT→ …
 *   effectRecorded ─CLOSE_TURN→ closed (checkpoint B: every tool_result is in messages)
 *   closed ─MODEL_REPLY→ pendingTool | done | stoppedAtMaxTurns | failed
 *
 * Pure on purpose: named actions and guards only, no I/O, no invoked actors. Every state is a
 * resting state (nothing leaves by `always`), so every snapshot the runtime persists is one a
 * resume can stand on. The entry/transition actions `requestModelReply`, `runPendingTools` and
 * `requestTurnClose` do nothing here: they announce the effect the runtime must carry out once
 * the snapshot that names it is durable.
 */
import { and, assign, setup } from 'xstate';
import {
  addUsage,
  assistantMessageOf,
  failureForStopReason,
  openCalls,
  pendingCallsOf,
  textOf,
  toolResultsMessageOf,
} from './agent-loop.logic.ts';
import type { AgentContext, AgentEvent, AgentInput } from './agent-loop.types.ts';
import { ZERO_USAGE } from './agent-loop.types.ts';

/** The runtime executes these; inside the machine they are only announcements. */
function announceEffect(): void {}

/**
 * xstate's `transition()` builds a throwaway actor on every call, and that actor computes an
 * initial snapshot with no input. Without a default here each transition would throw and catch
 * a TypeError, about half the CPU of a transition (measured by `npm run bench`); the throwaway
 * snapshot is discarded, so what the default holds never matters.
 */
const NO_INPUT: AgentInput = { task: '', maxTurns: 0 };

function initialContext({ input = NO_INPUT }: { input: AgentInput | undefined }): AgentContext {
  return {
    task: input.task,
    system: input.system ?? null,
    maxTurns: input.maxTurns,
    turn: 0,
    usage: { ...ZERO_USAGE },
    messages: [{ role: 'user', content: input.task }],
    pending: [],
    results: [],
    heldReply: null,
    finalText: null,
    failure: null,
  };
}

export const agentLoopMachine = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentEvent,
    input: {} as AgentInput,
  },
  actions: {
    requestModelReply: announceEffect,
    runPendingTools: announceEffect,
    requestTurnClose: announceEffect,
    countReplyUsage: assign({
      usage: ({ context, event }) =>
        event.type === 'MODEL_REPLY' ? addUsage(context.usage, event.reply.usage)
        : event.type === 'MODEL_REPLY_INVALID' ? addUsage(context.usage, event.usage)
        : context.usage,
    }),
    appendAssistantReply: assign({
      messages: ({ context, event }) =>
        event.type === 'MODEL_REPLY' ? [...context.messages, assistantMessageOf(event.reply)] : context.messages,
    }),
    openTurn: assign({
      turn: ({ context }) => context.turn + 1,
      pending: ({ context, event }) => (event.type === 'MODEL_REPLY' ? pendingCallsOf(event.reply) : context.pending),
      results: () => [],
      heldReply: () => null,
    }),
    holdReply: assign({
      heldReply: ({ context, event }) => (event.type === 'MODEL_REPLY' ? event.reply : context.heldReply),
    }),
    recordToolResult: assign({
      results: ({ context, event }) =>
        event.type === 'TOOL_RESULT' ? [...context.results, event.outcome] : context.results,
    }),
    closeTurn: assign({
      messages: ({ context }) => [...context.messages, toolResultsMessageOf(context.pending, context.results)],
      pending: () => [],
      results: () => [],
    }),
    recordFinalText: assign({
      finalText: ({ event }) => (event.type === 'MODEL_REPLY' ? textOf(event.reply.content) : null),
    }),
    recordStopFailure: assign({
      failure: ({ context, event }) => (event.type === 'MODEL_REPLY' ? failureForStopReason(event.reply) : context.failure),
    }),
    recordInvalidReply: assign({
      failure: ({ context, event }) =>
        event.type === 'MODEL_REPLY_INVALID'
          ? {
              reason: 'invalid_reply' as const,
              message: `The model's reply could not be acted on: ${event.reason}. Nothing in it was executed.`,
              retryable: true,
            }
          : context.failure,
    }),
  },
  guards: {
    replyWantsTools: ({ event }) => event.type === 'MODEL_REPLY' && event.reply.stop_reason === 'tool_use',
    turnsRemain: ({ context }) => context.turn < context.maxTurns,
    replyPausesTurn: ({ event }) => event.type === 'MODEL_REPLY' && event.reply.stop_reason === 'pause_turn',
    replyEndsTurn: ({ event }) =>
      event.type === 'MODEL_REPLY' && (event.reply.stop_reason === 'end_turn' || event.reply.stop_reason === 'stop_sequence'),
    isLastOpenCall: ({ context, event }) => {
      if (event.type !== 'TOOL_RESULT') return false;
      const open = openCalls(context);
      return open.length === 1 && open[0]!.id === event.outcome.tool_use_id;
    },
    isOpenCall: ({ context, event }) =>
      event.type === 'TOOL_RESULT' && openCalls(context).some((call) => call.id === event.outcome.tool_use_id),
    allCallsRecorded: ({ context }) => context.pending.length > 0 && openCalls(context).length === 0,
  },
}).createMachine({
  id: 'agentLoop',
  context: initialContext,
  initial: 'awaitingModel',
  states: {
    awaitingModel: {
      description: 'Nothing pending; the next effect is a model call.',
      entry: 'requestModelReply',
      on: {
        MODEL_REPLY: [
          {
            guard: and(['replyWantsTools', 'turnsRemain']),
            target: 'pendingTool',
            actions: ['countReplyUsage', 'appendAssistantReply', 'openTurn'],
          },
          { guard: 'replyWantsTools', target: 'stoppedAtMaxTurns', actions: ['countReplyUsage', 'holdReply'] },
          {
            guard: 'replyPausesTurn',
            target: 'awaitingModel',
            reenter: true,
            actions: ['countReplyUsage', 'appendAssistantReply'],
          },
          { guard: 'replyEndsTurn', target: 'done', actions: ['countReplyUsage', 'appendAssistantReply', 'recordFinalText'] },
          { target: 'failed', actions: ['countReplyUsage', 'recordStopFailure'] },
        ],
        MODEL_REPLY_INVALID: { target: 'failed', actions: ['countReplyUsage', 'recordInvalidReply'] },
      },
    },
    pendingTool: {
      description: "Checkpoint A: the model's tool calls are recorded; none has a recorded result yet.",
      entry: 'runPendingTools',
      on: {
        TOOL_RESULT: [
          { guard: 'isLastOpenCall', target: 'effectRecorded', actions: ['recordToolResult', 'requestTurnClose'] },
          { guard: 'isOpenCall', target: 'effectRecorded', actions: ['recordToolResult', 'runPendingTools'] },
        ],
      },
    },
    effectRecorded: {
      description: "A tool call's outcome is in the ledger; the turn's tool_results are not all in messages yet.",
      on: {
        TOOL_RESULT: [
          { guard: 'isLastOpenCall', target: 'effectRecorded', actions: ['recordToolResult', 'requestTurnClose'] },
          { guard: 'isOpenCall', target: 'effectRecorded', actions: ['recordToolResult', 'runPendingTools'] },
        ],
        CLOSE_TURN: { guard: 'allCallsRecorded', target: 'closed', actions: 'closeTurn' },
      },
    },
    closed: {
      description: "Checkpoint B: every tool_result of the turn is in messages; the next effect is a model call.",
      entry: 'requestModelReply',
      on: {
        MODEL_REPLY: [
          {
            guard: and(['replyWantsTools', 'turnsRemain']),
            target: 'pendingTool',
            actions: ['countReplyUsage', 'appendAssistantReply', 'openTurn'],
          },
          { guard: 'replyWantsTools', target: 'stoppedAtMaxTurns', actions: ['countReplyUsage', 'holdReply'] },
          { guard: 'replyPausesTurn', target: 'awaitingModel', actions: ['countReplyUsage', 'appendAssistantReply'] },
          { guard: 'replyEndsTurn', target: 'done', actions: ['countReplyUsage', 'appendAssistantReply', 'recordFinalText'] },
          { target: 'failed', actions: ['countReplyUsage', 'recordStopFailure'] },
        ],
        MODEL_REPLY_INVALID: { target: 'failed', actions: ['countReplyUsage', 'recordInvalidReply'] },
      },
    },
    done: { type: 'final', description: 'The model ended the turn; finalText holds its answer.' },
    stoppedAtMaxTurns: {
      type: 'final',
      description: 'MAX_TURNS reached; the unacted tool_use reply is held so a resume with more turns can go on.',
    },
    failed: { type: 'final', description: 'Stopped for the reason in context.failure.' },
  },
});

export type AgentLoopMachine = typeof agentLoopMachine;
