/**
 * The data the page is built from: the machine (for the legend and highlighting) and one run's
 * history. Plain JSON, written into the page by the generator and read by the page's script,
 * which imports these types (and nothing from Node).
 */
import type { AgentStateName, DecisionNeed, OutcomeKind, TokenUsage, Verdict } from '../machines/agent-loop.types.ts';
import type { HistoryStep } from '../src/runtime/run-status.ts';
import type { ReconcileOutcomeName } from '../src/store/journal/journal-record.ts';
import type { StateRole } from './machine-graph.ts';

export interface VizPageData {
  machine: MachineView;
  run: RunView | null;
  /** Why there is no run to show (the page still draws the machine). */
  noRun: string | null;
}

export interface MachineView {
  id: string;
  states: Array<{ name: string; role: StateRole | null; final: boolean; resting: boolean; description: string | null }>;
  edges: Array<{ id: string; source: string; target: string; events: string[] }>;
}

export interface RunView {
  runId: string;
  location: string;
  task: string;
  state: AgentStateName;
  finished: boolean;
  turn: number;
  maxTurns: number;
  journalBytes: number;
  finalText: string | null;
  failure: string | null;
  /** A record cut off mid-write after the last complete one (a resume drops it). */
  tornTail: { offset: number; bytes: number } | null;
  /** Every message of the run once; steps refer to them by index. */
  messages: MessageView[];
  /** Every ledger entry of the run once, in the order they were first written. */
  ledger: LedgerEntryView[];
  steps: StepView[];
  processes: ProcessView[];
  /** A run made by fork: the parent, and its last record this run took (records 0..seq are the parent's). */
  forkedFrom: { runId: string; seq: number; location: string } | null;
  /** The runs forked from this one (noted beside a file run's journal), oldest first. */
  forks: Array<{ seq: number; runId: string; location: string }>;
  /** A sub-agent's run: the run and the call that started it. */
  calledBy: { runId: string; toolUseId: string } | null;
  /** The sub-agent runs this run's calls started, by call: the record of the reply that made the call (null: not found), and where each stands. */
  subagents: Array<{ toolUseId: string; runId: string; state: AgentStateName; turn: number; seq: number | null }>;
  /**
   * The fork command for a step, in two pieces around its record number: `${before} SEQ ${after}SEQ`
   * (a new directory named after the run's); null where the run is not in a directory.
   */
  forkCommand: { before: string; after: string } | null;
}

export type BlockView =
  | { kind: 'text'; text: string }
  | { kind: 'tool_use'; id: string; name: string; input: string }
  | { kind: 'tool_result'; toolUseId: string; content: string; isError: boolean }
  /**
   * A thinking block (its text, shown collapsed) or a redacted_thinking block (redacted: no text,
   * its data encrypted). `summary`: the collapsed line; `sealed`: what it carries that is not
   * shown as text (the signature, the encrypted data), in words.
   */
  | { kind: 'thinking'; redacted: boolean; text: string; summary: string; sealed: string }
  /** A call of a server tool Anthropic's servers run (web_search, web_fetch, code_execution…): its tool, id and input. */
  | { kind: 'server_tool_use'; id: string; name: string; summary: string; input: string }
  /**
   * A server tool's result block: what kind of result (2 results, exit 0, error: …), and the
   * block as JSON with each encrypted field named by its size instead of its content.
   */
  | { kind: 'server_tool_result'; type: string; toolUseId: string; tool: string; summary: string; json: string }
  | { kind: 'other'; type: string; json: string };

export interface MessageView {
  role: 'user' | 'assistant';
  blocks: BlockView[];
}

export interface LedgerEntryView {
  toolUseId: string;
  name: string;
  kind: OutcomeKind;
  isError: boolean;
  content: string;
  /** The record that first wrote it. */
  seq: number;
}

export interface PendingCallView {
  id: string;
  name: string;
  input: string;
  /** Its outcome is in this turn's results (and the ledger). */
  recorded: boolean;
  /** It needs a person's decision first (approval, or an answer for ask_user); null: it runs unasked. */
  needs: DecisionNeed | null;
  /** How it was decided, if it was (in this turn, as of this step). */
  verdict: Verdict | null;
}

/** A person's (or a deadline's) decision about one call, as a DECISION record made it durable. */
export interface DecisionView {
  toolUseId: string;
  name: string;
  verdict: Verdict;
  by: string;
  at: number;
  /** In words: "approved by ana (note: fine)", "denied by deadline: no decision within 15m", "answered by bo: Tuesday". */
  words: string;
  reason: string | null;
  note: string | null;
  /** The input a person edited (approved), as JSON text. */
  input: string | null;
  /** The answer (answered). */
  text: string | null;
  /** When the call began to wait (its DECISION_NEEDED record), and how long it waited. */
  since: number | null;
  waitedMs: number | null;
  /** The DECISION record. */
  seq: number;
}

/** The call the run waits on at a step (state awaitingDecision). */
export interface WaitView {
  toolUseId: string;
  name: string;
  needs: DecisionNeed;
  since: number;
}

export interface ReconcileView {
  toolUseId: string;
  name: string;
  decision: ReconcileOutcomeName;
  /** What the resume printed for it. */
  phrase: string;
  /** The record that carried the decision out, or null when it needed no write (a ledger hit already in the turn). */
  seq: number | null;
}

/** One persisted transition: one journal record (what `history` prints of it, and more). */
export interface StepView extends Pick<HistoryStep, 'seq' | 'at' | 'point' | 'state' | 'event' | 'turn' | 'bytes'> {
  maxTurns: number;
  /** The tools this step is about (the calls a checkpoint A opened, the call an effect write recorded…). */
  tools: string[];
  /**
   * The diagram arrow this transition took, if it took one: START and REOPEN are the runtime's, and
   * MODEL_USAGE is taken in place (no target: the state is neither left nor re-entered).
   */
  edge: string | null;
  /** How this record changed the message list: keep `from` messages, then append these (indexes into RunView.messages). */
  messageEdit: { from: number; add: number[] } | null;
  pending: PendingCallView[];
  /** The ledger at this step is RunView.ledger's first `ledgerSize` entries. */
  ledgerSize: number;
  /** Tool_use_ids whose ledger entries this record wrote. */
  ledgerWritten: string[];
  /** The effect this snapshot announces, in words (what the runtime does next), or null in a final state. */
  next: string | null;
  usage: TokenUsage;
  /** Index into RunView.processes. */
  process: number;
  reconcile: ReconcileView | null;
  /** Ledger hits a resume reused (nothing to write for them) noted on this record. */
  reused: ReconcileView[];
  reopened: { maxTurns: number; previousState: AgentStateName } | null;
  /** The call the run waits on for a person at this step, since when (null when it waits for none). */
  waiting: WaitView | null;
  /** The decisions this record made durable (a DECISION record). */
  decided: DecisionView[];
  /** The open turn's decisions as of this step, oldest first. */
  turnDecisions: DecisionView[];
}

/** One process that drove the run: the one that started it, then one per resume that wrote a record. */
export interface ProcessView {
  pid: number | null;
  firstSeq: number;
  lastSeq: number;
  /** Set for a process that took over after another stopped. */
  resume: {
    /** The last record of the process before. */
    fromSeq: number;
    /** A cut-off record the resume dropped. */
    cutEnd: { offset: number; bytes: number; lostCommittedRecord: number | null } | null;
    /** How each call of the turn left open was settled, in order. */
    decisions: ReconcileView[];
  } | null;
  /**
   * How it ended, as far as the journal tells ('forked': a forked run's records from its parent
   * end there; 'waiting': it stopped with a call waiting for a person's decision, as a run does
   * unless told to wait for it; 'limit': it stopped at its MAX_TURNS or its budget, resumable;
   * 'stopped': killed, crashed or interrupted; 'open': the last process, neither of these).
   */
  end: 'finished' | 'waiting' | 'limit' | 'stopped' | 'open' | 'forked';
}
