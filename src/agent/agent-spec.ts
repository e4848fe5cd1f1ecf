/** What a user writes to define an agent (defineAgent checks it and gives it its version). */
import type { Budget } from '../../machines/agent-loop.types.ts';
import type { RequireApproval } from '../awaits/needs-decision.ts';
import type { ClearToolUsesOptions } from '../compaction/clear-tool-uses.ts';
import type { CompactionOptions } from '../compaction/compaction-settings.ts';
import type { Model } from '../model/model.ts';
import type { ServerToolsOption } from '../model/server-tools.ts';
import type { ToolDefinition } from '../tools/tool.ts';

export interface AgentSpec {
  /** How runs, workers and `submit --agent` name it. */
  name: string;
  /**
   * A Claude model name (the model is made with anthropicModel when a run needs it, from
   * ANTHROPIC_API_KEY), or a Model (a scripted one in tests, your own adapter).
   */
  model: string | Model;
  /**
   * Claude's server tools its runs offer (web search, web fetch, code execution), for a model
   * given by name: anthropicModel's serverTools. A Model of your own brings its own
   * (anthropicModel({ serverTools })); both are part of the version.
   */
  serverTools?: ServerToolsOption | undefined;
  /** The system prompt. */
  system?: string | undefined;
  tools: readonly ToolDefinition[];
  /** Default 20. */
  maxTurns?: number | undefined;
  /** The most tokens the model may write in one reply. Default: 4096. */
  maxTokens?: number | undefined;
  requireApproval?: RequireApproval | undefined;
  allowQuestions?: boolean | undefined;
  decisionTimeoutMs?: number | undefined;
  budget?: Budget | undefined;
  compaction?: CompactionOptions | undefined;
  clearToolUses?: ClearToolUsesOptions | boolean | undefined;
  /**
   * Earlier versions of this agent whose runs this one may go on with (say so only when the
   * change cannot confuse a run in flight: a reworded description, a tool added at the end).
   * A run started with another version waits for a worker that has it.
   */
  compatibleWith?: readonly string[] | undefined;
}
