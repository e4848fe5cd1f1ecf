/**
 * The agent loop as an explicit state machine. The story it keeps is the lesson's:
 *
 *   awaitingModel ─MODEL_REPLY(tool_use)→ pendingTool     checkpoint A: the calls are recorded, none has run
 *   pendingTool ─TOOL_RESULT→ effectRecorded ─TOOL_RESULT→ …  each outcome in the ledger, keyed by tool_use_id
 *   effectRecorded ─CLOSE_TURN→ closed                      checkpoint B: every tool_result is in messages
 *   closed ─MODEL_REPLY→ …                                  the next turn, until the model ends it
 *
 * Everything else (decisions, compaction, budgets, cancel, the stop reasons) is in the states and
 * transitions below, each with its description: the whole graph is drawn from this definition by
 * `durable-agent viz` (`viz --stately` prints it for Stately Studio), so no picture of it is kept by hand.
 *
 * Pure on purpose: named actions and guards only, no I/O, no invoked actors. Every state is a
 * resting state (nothing leaves by `always`), so every snapshot the runtime persists is one a
 * resume can stand on. The entry/transition actions `requestModelReply`, `runPendingTools`,
 * `requestTurnClose`, `awaitDecision` and `requestCompaction` do nothing here: they announce the
 * effect the runtime must carry out once the snapshot that names it is durable.
 */
import { and, assertEvent, assign, not, or, setup, stateIn } from 'xstate';
import {
  addUsage,
  containerAfter,
  afterLastCompaction,
  assistantMessageOf,
  budgetStopOf,
  isTenantQuotaStop,
  isCompactionBlock,
  isCompactionCut,
  markCompaction,
  awaitsDecision,
  cancellationProblem,
  decisionOutcomeOf,
  verdictFits,
  failureForStopReason,
  openCalls,
  isContinuingMessage,
  pauseLimitFailure,
  pendingCallsOf,
  reopenedContext,
  textOf,
  toolResultsMessageOf,
  usageCounted,
} from './agent-loop.logic.ts';
import type { AgentContext, AgentEvent, AgentInput, Decision, Message } from './agent-loop.types.ts';
import { MAX_PAUSES_IN_A_ROW, ZERO_USAGE } from './agent-loop.types.ts';

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
    decisions: [],
    awaiting: null,
    pausesInARow: 0,
    maxPausesInARow: input.maxPausesInARow ?? MAX_PAUSES_IN_A_ROW,
    heldReply: null,
    finalText: null,
    failure: null,
    // Only a run with a budget carries these: every other run's journal stays as it was.
    ...(input.budget ? { budget: input.budget } : {}),
    ...(input.budget?.maxCostUsd !== undefined ? { costUsd: input.costUsd ?? 0 } : {}),
    compacted: null,
  };
}

/**
 * The messages with one more at the end. `concat` copies the list in one block; a spread
 * walks it element by element, about twice the time on a long conversation (this runs twice a
 * turn over the whole context).
 */
function appended(messages: readonly Message[], message: Message): Message[] {
  return messages.concat([message]);
}

/** A decision is about the call the run waits on, and its verdict answers what that call needs. */
function decisionFitsAwaitedCall(context: AgentContext, decision: Decision): boolean {
  const call = context.pending.find((pending) => pending.id === context.awaiting?.tool_use_id);
  return call !== undefined && decision.tool_use_id === call.id && verdictFits(call, decision);
}

/**
 * The final states: a run that reaches one has ended, its snapshot's status is `done` (what an
 * inspector shows), and its process exits with the state's code. All but cancelled take REOPEN:
 * a later process that brings what the run lacked (more turns, a larger budget, a retry, the
 * user's next message) takes it up again. An actor takes no event once done; the pure
 * `transition()` the runtime steps with does, and the runtime reads the status again from the
 * state a REOPEN enters (withStatusOfState). Kept together so that the root's handlers can refuse them by name:
 * a root handler is tried in every state.
 */
const REOPEN_DESCRIPTION = 'The run is taken up again';
const finalStates = {
  done: {
    type: 'final',
    description: 'The model ended the turn; finalText holds its answer. The user’s next message continues the conversation.',
    on: {
      REOPEN: {
        guard: 'continuesConversation',
        target: 'awaitingModel',
        actions: 'reopenRun',
        description: `${REOPEN_DESCRIPTION} with the user’s next message (and turns left to answer it): it joins the messages, durable before the model is asked.`,
      },
    },
  },
  stoppedAtMaxTurns: {
    type: 'final',
    description: 'MAX_TURNS reached; the unacted tool_use reply is held so a resume with more turns can go on.',
    on: {
      REOPEN: {
        guard: 'givesMoreTurns',
        target: 'awaitingModel',
        actions: 'reopenRun',
        description: `${REOPEN_DESCRIPTION} with more turns: the held reply is acted on first.`,
      },
    },
  },
  failed: {
    type: 'final',
    description: 'Stopped for the reason in context.failure.',
    on: {
      REOPEN: {
        guard: 'retriesFailure',
        target: 'awaitingModel',
        actions: 'reopenRun',
        description: `${REOPEN_DESCRIPTION} after a failure worth retrying (a refused reply, too many pauses): the model is asked again.`,
      },
    },
  },
  cancelled: {
    type: 'final',
    description: 'Cancelled: context.cancellation says who, why and when. A resume is refused; fork the run to try again from a step.',
  },
  stoppedAtBudget: {
    type: 'final',
    description: 'A budget (context.budgetStop: cost or tokens) was reached before a model call; a resume with a larger budget makes that call.',
    on: {
      REOPEN: {
        guard: 'changesBudget',
        target: 'awaitingModel',
        actions: 'reopenRun',
        description: `${REOPEN_DESCRIPTION} with a changed budget: the budget stop is lifted, and the budget is checked again before the call.`,
      },
    },
  },
} as const;

/**
 * Read from the final states above, so that one added there is refused too (a final state put
 * anywhere else fails test/machines/machine-structure.test.ts, which tries CANCEL in each).
 */
const inLiveState = not(or(Object.keys(finalStates).map((state) => stateIn(state))));

const machineSetup = setup({
  types: {
    context: {} as AgentContext,
    events: {} as AgentEvent,
    input: {} as AgentInput,
  },
  actions: {
    requestModelReply: announceEffect,
    runPendingTools: announceEffect,
    requestTurnClose: announceEffect,
    awaitDecision: announceEffect,
    requestCompaction: announceEffect,
    // One action for what every reply does to the counts (an assign each costs xstate a new snapshot).
    countReply: assign({
      usage: ({ context, event }) => {
        assertEvent(event, ['MODEL_REPLY', 'MODEL_REPLY_INVALID']);
        return addUsage(context.usage, event.type === 'MODEL_REPLY' ? event.reply.usage : event.usage);
      },
      pausesInARow: ({ context, event }) => {
        assertEvent(event, ['MODEL_REPLY', 'MODEL_REPLY_INVALID']);
        return event.type === 'MODEL_REPLY' && event.reply.stop_reason === 'pause_turn' ? context.pausesInARow + 1 : 0;
      },
    }),
    // A reply's tokens as it arrives; its cost only while the run keeps one (a cost budget).
    countUsage: assign(({ context, event }) => {
      assertEvent(event, 'MODEL_USAGE');
      return usageCounted(context, event);
    }),
    // The reply joins the messages; one that brings a compaction block also moves the point the
    // server reads from, dropping what it no longer reads.
    // A reply that names its code execution container leaves it for the next requests (its content is kept with it).
    appendAssistantReply: assign(({ context, event }) => {
      assertEvent(event, 'MODEL_REPLY');
      const messages = appended(context.messages, assistantMessageOf(event.reply));
      const container = containerAfter(context.container, event.reply);
      const withContainer = container !== context.container ? { container } : {};
      if (!event.reply.content.some(isCompactionBlock)) return { messages, ...withContainer };
      const { messages: kept, dropped } = afterLastCompaction(messages);
      return dropped.length ? { messages: kept, compacted: markCompaction(context.compacted, dropped), ...withContainer } : { messages, ...withContainer };
    }),
    replaceWithSummary: assign(({ context, event }) => {
      assertEvent(event, 'COMPACTED');
      return {
        messages: [event.summary, ...context.messages.slice(event.replaced)],
        compacted: markCompaction(context.compacted, context.messages.slice(0, event.replaced)),
      };
    }),
    openTurn: assign(({ context, event }) => {
      assertEvent(event, 'MODEL_REPLY');
      return { turn: context.turn + 1, pending: pendingCallsOf(event.reply, event.needsDecision), results: [], decisions: [], awaiting: null, heldReply: null };
    }),
    markAwaited: assign({
      awaiting: ({ event }) => {
        assertEvent(event, 'DECISION_NEEDED');
        return { tool_use_id: event.tool_use_id, since: event.at };
      },
    }),
    recordDecision: assign({
      decisions: ({ context, event }) => {
        assertEvent(event, 'DECISION');
        return [...context.decisions, event.decision];
      },
      awaiting: () => null,
    }),
    recordDecisionOutcome: assign({
      results: ({ context, event }) => {
        assertEvent(event, 'DECISION');
        const call = context.pending.find((pending) => pending.id === event.decision.tool_use_id)!;
        return [...context.results, decisionOutcomeOf(call, event.decision)];
      },
    }),
    holdReply: assign({
      heldReply: ({ event }) => {
        assertEvent(event, 'MODEL_REPLY');
        return event.reply;
      },
    }),
    recordToolResult: assign({
      results: ({ context, event }) => {
        assertEvent(event, 'TOOL_RESULT');
        return [...context.results, event.outcome];
      },
    }),
    closeTurn: assign({
      messages: ({ context }) => appended(context.messages, toolResultsMessageOf(context.pending, context.results)),
      pending: () => [],
      results: () => [],
    }),
    recordFinalText: assign({
      finalText: ({ event }) => {
        assertEvent(event, 'MODEL_REPLY');
        return textOf(event.reply.content);
      },
    }),
    recordStopFailure: assign({
      failure: ({ event }) => {
        assertEvent(event, 'MODEL_REPLY');
        return failureForStopReason(event.reply);
      },
    }),
    recordPauseLimit: assign({
      failure: ({ context }) => pauseLimitFailure(context.maxPausesInARow),
    }),
    recordInvalidReply: assign({
      failure: ({ event }) => {
        assertEvent(event, 'MODEL_REPLY_INVALID');
        return {
          reason: 'invalid_reply' as const,
          message: `The model's reply could not be acted on: ${event.reason}. Nothing in it was executed.`,
          retryable: true,
        };
      },
      // A held reply that turns out invalid is dropped, so that the resume asks the model again.
      heldReply: () => null,
    }),
    recordCancellation: assign({
      cancellation: ({ event }) => {
        assertEvent(event, 'CANCEL');
        return event.cancellation;
      },
    }),
    recordBudgetStop: assign({
      budgetStop: ({ context, event }) => {
        assertEvent(event, 'BUDGET_REACHED');
        return isTenantQuotaStop(event.tenantQuota) ? event.tenantQuota : budgetStopOf(context, event.nextCall);
      },
    }),
    reopenRun: assign(({ context, event }) => {
      assertEvent(event, 'REOPEN');
      return reopenedContext(context, event, true);
    }),
    applySettings: assign(({ context, event }) => {
      assertEvent(event, 'REOPEN');
      return reopenedContext(context, event, false);
    }),
  },
  guards: {
    replyWantsTools: ({ event }) => {
      assertEvent(event, 'MODEL_REPLY');
      return event.reply.stop_reason === 'tool_use';
    },
    turnsRemain: ({ context }) => context.turn < context.maxTurns,
    replyPausesTurn: ({ event }) => {
      assertEvent(event, 'MODEL_REPLY');
      return event.reply.stop_reason === 'pause_turn';
    },
    pauseLimitReached: ({ context }) => context.pausesInARow >= context.maxPausesInARow,
    replyAsksToGoOn: ({ event }) => {
      assertEvent(event, 'MODEL_REPLY');
      return event.reply.stop_reason === 'pause_turn' || event.reply.stop_reason === 'compaction';
    },
    compactionDue: ({ context, event }) => {
      assertEvent(event, 'COMPACT');
      // A held reply is acted on first: it was counted against the context that produced it.
      return context.heldReply === null && event.estimatedTokens >= event.limit && isCompactionCut(context.messages, event.keepFrom);
    },
    summaryFits: ({ context, event }) => {
      assertEvent(event, 'COMPACTED');
      const { summary } = event;
      return summary.role === 'user' && isCompactionCut(context.messages, event.replaced);
    },
    replyEndsTurn: ({ event }) => {
      assertEvent(event, 'MODEL_REPLY');
      return event.reply.stop_reason === 'end_turn' || event.reply.stop_reason === 'stop_sequence';
    },
    isLastOpenCall: ({ context, event }) => {
      assertEvent(event, 'TOOL_RESULT');
      const open = openCalls(context);
      return open.length === 1 && open[0]!.id === event.outcome.tool_use_id;
    },
    isOpenCall: ({ context, event }) => {
      assertEvent(event, 'TOOL_RESULT');
      return openCalls(context).some((call) => call.id === event.outcome.tool_use_id);
    },
    allCallsRecorded: ({ context }) => context.pending.length > 0 && openCalls(context).length === 0,
    nextIsUndecided: ({ context, event }) => {
      assertEvent(event, 'DECISION_NEEDED');
      const next = openCalls(context)[0];
      return next !== undefined && next.id === event.tool_use_id && awaitsDecision(context, next);
    },
    approvesCall: ({ context, event }) => {
      assertEvent(event, 'DECISION');
      return decisionFitsAwaitedCall(context, event.decision) && event.decision.verdict === 'approved';
    },
    settlesLastCall: ({ context, event }) => {
      assertEvent(event, 'DECISION');
      const open = openCalls(context);
      return decisionFitsAwaitedCall(context, event.decision) && open.length === 1 && open[0]!.id === event.decision.tool_use_id;
    },
    settlesCall: ({ context, event }) => {
      assertEvent(event, 'DECISION');
      return decisionFitsAwaitedCall(context, event.decision);
    },
    saysWho: ({ event }) => {
      assertEvent(event, 'CANCEL');
      return cancellationProblem(event.cancellation) === null;
    },
    budgetReached: ({ context, event }) => {
      assertEvent(event, 'BUDGET_REACHED');
      return isTenantQuotaStop(event.tenantQuota) || budgetStopOf(context, event.nextCall) !== null;
    },
    // A REOPEN with a message continues a done conversation and nothing else.
    continuesConversation: ({ context, event }) => {
      assertEvent(event, 'REOPEN');
      return isContinuingMessage(event.message) && event.maxTurns > context.turn;
    },
    givesMoreTurns: ({ context, event }) => {
      assertEvent(event, 'REOPEN');
      return event.message === undefined && event.maxTurns > context.turn;
    },
    retriesFailure: ({ context, event }) => {
      assertEvent(event, 'REOPEN');
      return event.message === undefined && context.failure?.retryable === true;
    },
    changesBudget: ({ event }) => {
      assertEvent(event, 'REOPEN');
      return event.message === undefined && Boolean(event.budget);
    },
    changesSettings: ({ context, event }) => {
      assertEvent(event, 'REOPEN');
      return event.message === undefined && (event.maxTurns !== context.maxTurns || Boolean(event.budget));
    },
    inLiveState,
  },
});

/**
 * What a model reply does, the same in both states that ask the model (awaitingModel and
 * closed), tried in this order. `reenter` makes the pause transition re-run awaitingModel's
 * entry (the next model call) when it is taken from awaitingModel itself; from closed the
 * target is another state, entered anyway.
 */
const onModelReply = {
  MODEL_REPLY: [
    {
      guard: and(['replyWantsTools', 'turnsRemain']),
      target: 'pendingTool',
      actions: ['countReply', 'appendAssistantReply', 'openTurn'],
      description: 'The reply names tools and a turn is left: record the calls (checkpoint A), then run them.',
    },
    {
      guard: 'replyWantsTools',
      target: 'stoppedAtMaxTurns',
      actions: ['countReply', 'holdReply'],
      description: 'The reply names tools but MAX_TURNS is reached: hold the reply, unacted, for a resume with more turns.',
    },
    {
      guard: and(['replyPausesTurn', 'pauseLimitReached']),
      target: 'failed',
      actions: ['countReply', 'appendAssistantReply', 'recordPauseLimit'],
      description: 'One pause_turn too many in a row: stop (pause_limit); the paused content is kept, and a resume continues.',
    },
    {
      guard: 'replyAsksToGoOn',
      target: 'awaitingModel',
      reenter: true,
      actions: ['countReply', 'appendAssistantReply'],
      description:
        'pause_turn, or compaction (the server compacted and paused): keep the content (a compaction block verbatim, dropping what the server no longer reads) and ask the model again.',
    },
    {
      guard: 'replyEndsTurn',
      target: 'done',
      actions: ['countReply', 'appendAssistantReply', 'recordFinalText'],
      description: 'end_turn or stop_sequence: the reply is the final answer.',
    },
    {
      target: 'failed',
      actions: ['countReply', 'recordStopFailure'],
      description: 'Any other stop reason (max_tokens, refusal, context window, unknown): stop without executing the reply.',
    },
  ],
  MODEL_REPLY_INVALID: {
    target: 'failed',
    actions: ['countReply', 'recordInvalidReply'],
    description: 'The runtime refused the reply (a broken protocol or shape): stop, nothing in it executed; a resume asks again.',
  },
  COMPACT: {
    guard: 'compactionDue',
    target: 'compacting',
    description: 'Client compaction: the context measured at or above its trigger, and older turns can be cut off: summarise them before the next model call.',
  },
} as const;

/**
 * In every state that makes a model call: the reply's tokens, counted before anything else is
 * done with it, so that a crash before the reply is saved loses the reply but not what it cost.
 * Targetless: the state is not re-entered and no effect is announced (the call is under way).
 */
const onModelUsage = {
  MODEL_USAGE: {
    actions: 'countUsage',
    description: "A reply's tokens (and, with a cost budget, its cost) are counted the moment it arrives, before it is saved or acted on.",
  },
} as const;

/** Before a model call: a budget the run has reached stops it, resumably, instead of the call. */
const onBudgetReached = {
  BUDGET_REACHED: {
    guard: 'budgetReached',
    target: 'stoppedAtBudget',
    actions: 'recordBudgetStop',
    description: 'A budget is reached before the next model call: stop without asking; a resume with a larger budget makes that call.',
  },
} as const;

/**
 * What a tool's recorded outcome does in the states of an open turn; the last open call
 * announces the turn's close, any other the next call.
 */
const onToolResult = [
  {
    guard: 'isLastOpenCall',
    target: 'effectRecorded',
    actions: ['recordToolResult', 'requestTurnClose'],
    description: "The turn's last open call has its outcome in the ledger: close the turn next.",
  },
  {
    guard: 'isOpenCall',
    target: 'effectRecorded',
    actions: ['recordToolResult', 'runPendingTools'],
    description: 'An open call has its outcome in the ledger: run the next open call.',
  },
] as const;

/**
 * A cancel, taken in every state that is not final: the run ends where it stands. One handler on
 * the root rather than one per state, so that a state added later takes it without being told.
 */
const onCancel = {
  guard: and(['inLiveState', 'saysWho']),
  target: '.cancelled',
  actions: 'recordCancellation',
  description: 'Cancelled (by a person or a program, who and why recorded): the run ends here; nothing more runs, an open call stays unrun.',
} as const;

/**
 * A process takes up a live run with settings that differ from the run's (a new turn limit, a
 * budget change): they apply from here; the state, and the effect it announces, stay.
 */
const onReopen = {
  guard: and(['inLiveState', 'changesSettings']),
  actions: 'applySettings',
  description: 'The run is taken up with a new turn limit or budget: they apply from here; where it stands and what it does next stay.',
} as const;

/** The next open call needs a decision it does not have: wait, recording since when. */
const onDecisionNeeded = {
  guard: 'nextIsUndecided',
  target: 'awaitingDecision',
  actions: 'markAwaited',
  description: 'The next open call needs a decision it does not have: record that it waits, and since when; nothing runs.',
} as const;

export const agentLoopMachine = machineSetup.createMachine({
  id: 'agentLoop',
  context: initialContext,
  initial: 'awaitingModel',
  on: { CANCEL: onCancel, REOPEN: onReopen },
  states: {
    awaitingModel: {
      description: 'Nothing pending; the next effect is a model call.',
      entry: 'requestModelReply',
      on: { ...onModelUsage, ...onModelReply, ...onBudgetReached },
    },
    compacting: {
      description: 'Client compaction: the model is asked to summarise the older turns; the next effect is that summarising call.',
      entry: 'requestCompaction',
      on: {
        ...onModelUsage,
        COMPACTED: {
          guard: 'summaryFits',
          target: 'awaitingModel',
          actions: 'replaceWithSummary',
          description: 'The summary takes the place of the older turns (never between a tool_use and its tool_result); the model is asked next.',
        },
        MODEL_REPLY_INVALID: {
          target: 'failed',
          actions: ['countReply', 'recordInvalidReply'],
          description: 'The summarising reply could not be used: stop, nothing replaced; a resume asks for the summary again.',
        },
      },
    },
    pendingTool: {
      description: "Checkpoint A: the model's tool calls are recorded; none has a recorded result yet.",
      entry: 'runPendingTools',
      on: { TOOL_RESULT: onToolResult, DECISION_NEEDED: onDecisionNeeded },
    },
    effectRecorded: {
      description: "A tool call's outcome (or a person's decision about one) is recorded; the turn's tool_results are not all in messages yet.",
      on: {
        TOOL_RESULT: onToolResult,
        DECISION_NEEDED: onDecisionNeeded,
        CLOSE_TURN: {
          guard: 'allCallsRecorded',
          target: 'closed',
          actions: 'closeTurn',
          description: "Every call has its outcome: put the turn's tool_results into messages in one user message (checkpoint B).",
        },
      },
    },
    awaitingDecision: {
      description:
        'The next open call waits (context.awaiting) for what its kind of await needs: an approval, an answer to ask_user, a wait\'s time or event, or the end of the child run it queued; nothing runs until the DECISION that ends it is durable.',
      entry: 'awaitDecision',
      on: {
        DECISION: [
          {
            guard: 'approvesCall',
            target: 'effectRecorded',
            actions: ['recordDecision', 'runPendingTools'],
            description: 'Approved: record the approval, then run the call.',
          },
          {
            guard: 'settlesLastCall',
            target: 'effectRecorded',
            actions: ['recordDecision', 'recordDecisionOutcome', 'requestTurnClose'],
            description: "Denied or answered (a child run's end answers or denies), the turn's last open call: the decision is its ledger entry; close the turn next.",
          },
          {
            guard: 'settlesCall',
            target: 'effectRecorded',
            actions: ['recordDecision', 'recordDecisionOutcome', 'runPendingTools'],
            description: 'Denied or answered: the decision is the call\'s ledger entry; go on with the next open call.',
          },
        ],
      },
    },
    closed: {
      description: "Checkpoint B: every tool_result of the turn is in messages; the next effect is a model call.",
      entry: 'requestModelReply',
      on: { ...onModelUsage, ...onModelReply, ...onBudgetReached },
    },
    ...finalStates,
  },
});

export type AgentLoopMachine = typeof agentLoopMachine;
