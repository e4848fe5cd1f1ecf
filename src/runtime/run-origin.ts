/**
 * What started a run, recorded in its journal's header, and the check a resume makes against
 * it: a run is resumed by the command that started it, offering the same tools (names and input
 * schemas), unless the person resuming says the change is intended. Otherwise `demo --resume`
 * would go on with a run that `run` started, with other tools on the same files.
 */
import type { JournalHeader, PinnedAnnotations, RunOrigin } from '../store/journal/journal-record.ts';
import { canonicalJson } from '../tools/schema-hash.ts';
import { toolContractHash } from '../tools/tool-contract.ts';
import type { ToolDefinition } from '../tools/tool.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

/** The command recorded for a program that calls startRun / resumeRun itself. */
export const API_COMMAND = 'api';

/** `agentsModule`: the file the run's agent was loaded from, when a command loaded it from one. */
export function runOriginOf(command: string, modelName: string, tools: readonly ToolDefinition[], agentsModule?: string): RunOrigin {
  return {
    command,
    model: modelName,
    tools: tools.map((tool) => tool.name),
    toolSchemas: Object.fromEntries(tools.map((tool) => [tool.name, toolContractHash(tool)])),
    toolAnnotations: Object.fromEntries(tools.map((tool) => [tool.name, pinnedAnnotationsOf(tool)])),
    ...(agentsModule !== undefined ? { agentsModule } : {}),
  };
}

/** Only names, booleans and hints: nothing of a tool's configuration (an MCP server's env or headers). */
function pinnedAnnotationsOf(tool: ToolDefinition): PinnedAnnotations {
  const pinned: PinnedAnnotations = { readOnly: tool.readOnly === true, idempotent: tool.idempotent === true };
  const hints = Object.entries(tool.annotations ?? {}).filter(([, value]) => typeof value === 'boolean');
  if (hints.length) pinned.hints = Object.fromEntries(hints.sort(([a], [b]) => (a < b ? -1 : 1))) as Record<string, boolean>;
  return pinned;
}

/**
 * The tools offered by both whose contract changed since the run started (input schema or
 * annotations), with what changed in words: a call left open to one of them is not run again.
 */
export function changedTools(started: RunOrigin, offered: RunOrigin): Map<string, string> {
  const changed = new Map<string, string>();
  for (const name of started.tools) {
    if (!offered.tools.includes(name)) continue;
    const schema = started.toolSchemas[name] !== offered.toolSchemas[name];
    const before = started.toolAnnotations?.[name];
    const now = offered.toolAnnotations?.[name];
    const annotations = before && now && canonicalJson(before) !== canonicalJson(now);
    if (!schema && !annotations) continue;
    const what = schema && annotations ? 'the input schema and the annotations' : schema ? 'the input schema' : 'the annotations';
    const detail = annotations ? ` (${annotationWords(before)} then, ${annotationWords(now)} now)` : '';
    changed.set(name, `${what} of tool ${name} changed${detail}`);
  }
  return changed;
}

function annotationWords(pinned: PinnedAnnotations): string {
  const hints = Object.entries(pinned.hints ?? {}).map(([name, value]) => `${name}: ${value}`);
  return `${pinned.readOnly ? 'read-only' : pinned.idempotent ? 'idempotent' : 'side effect'}${hints.length ? ` {${hints.join(', ')}}` : ''}`;
}

/** What a resume found about the run's origin, for the 'resumed' event. */
export interface OriginCheck {
  /** Null for a journal written before the origin was recorded: nothing to compare. */
  startedBy: RunOrigin | null;
  /** Differences the resume went on with because it was told to (allowToolChange). */
  acceptedChanges: string[];
  /** Tools offered now whose contract changed since the start, with what changed: their open calls are not run. */
  changedTools: ReadonlyMap<string, string>;
}

/**
 * Compares what resumes the run with what started it; throws RunOriginMismatchError on a
 * difference unless `allowChange`. The model is not compared: switching models mid-run (a newer
 * one, a cheaper one for the rest of the work) is legitimate, and the conversation is the same.
 */
export function checkOrigin(location: string, header: JournalHeader, offered: RunOrigin, allowChange: boolean): OriginCheck {
  const startedBy = header.startedBy ?? null;
  if (!startedBy) return { startedBy, acceptedChanges: [], changedTools: new Map() };
  const changed = changedTools(startedBy, offered);
  const differences = originDifferences(startedBy, offered, changed);
  if (differences.length && !allowChange) throw new RunOriginMismatchError(location, startedBy, offered, differences);
  return { startedBy, acceptedChanges: differences, changedTools: changed };
}

/** `changed`: the tools offered by both whose contract changed (changedTools), each a difference too. */
function originDifferences(started: RunOrigin, offered: RunOrigin, changed: ReadonlyMap<string, string>): string[] {
  const differences: string[] = [];
  if (started.command !== offered.command) {
    differences.push(`it was started by ${commandWords(started.command)}, and this is ${commandWords(offered.command)}`);
  }
  const gone = started.tools.filter((name) => !offered.tools.includes(name));
  const added = offered.tools.filter((name) => !started.tools.includes(name));
  if (gone.length) differences.push(`${toolWords(gone)} ${gone.length === 1 ? 'is' : 'are'} not offered now`);
  if (added.length) differences.push(`${toolWords(added)} ${added.length === 1 ? 'is' : 'are'} new`);
  differences.push(...changed.values());
  return differences;
}

export class RunOriginMismatchError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'RunOriginMismatchError';
  constructor(
    readonly location: string,
    readonly startedBy: RunOrigin,
    readonly offered: RunOrigin,
    readonly differences: string[],
  ) {
    super(
      `The run at ${location} was started by ${originWords(startedBy)}; this resume is ${originWords(offered)}: ` +
        `${differences.join('; ')}. It was not resumed and nothing was changed. Resume it with ${howToResume(startedBy)}; ` +
        `or, if the change is intended, add --allow-tool-change (programmatic: allowToolChange: true): the model then ` +
        `gets the tools offered now, and a call left open to a tool that is gone gets an error result.`,
    );
  }
}

function originWords(origin: RunOrigin): string {
  return `${commandWords(origin.command)} (model ${origin.model}; tools ${listWords(origin.tools) || 'none'})`;
}

function commandWords(command: string): string {
  switch (command) {
    case API_COMMAND:
      return 'a program (the durable-agent API)';
    case 'worker':
      return 'a fleet worker';
    default:
      return `\`durable-agent ${command}\``;
  }
}

function howToResume(origin: RunOrigin): string {
  switch (origin.command) {
    case 'demo':
      return '`durable-agent demo --resume` (with the same --dir)';
    case 'run':
      if (origin.agentsModule !== undefined) return `\`durable-agent run --resume --agents ${origin.agentsModule}\` (with the same --agent, --dir and --run)`;
      return `\`durable-agent run --resume --model ${origin.model}\` (with the same --dir${origin.tools.some((name) => name.startsWith('mcp__')) ? ' and --mcp-config' : ''})`;
    case 'worker':
      return 'a fleet worker (`durable-agent worker`)';
    case 'serve':
      return `\`durable-agent serve --agents ${origin.agentsModule ?? 'FILE'}\` (with the same --dir): it takes its runs up when it starts`;
    default:
      return 'the program that started it (the same tools)';
  }
}

function toolWords(names: string[]): string {
  return `${names.length === 1 ? 'tool' : 'tools'} ${listWords(names)}`;
}

/** Past a few, an MCP server's tools are named by their server: "12 tools of MCP server fs (mcp__fs__…)". */
const MCP_TOOLS_NAMED = 3;

function listWords(names: readonly string[]): string {
  const byServer = new Map<string, string[]>();
  const own: string[] = [];
  for (const name of names) {
    const server = /^mcp__(.+?)__/.exec(name)?.[1];
    if (server === undefined) own.push(name);
    else byServer.set(server, [...(byServer.get(server) ?? []), name]);
  }
  const servers = [...byServer].flatMap(([server, tools]) => (tools.length > MCP_TOOLS_NAMED ? [`${tools.length} tools of MCP server ${server} (mcp__${server}__…)`] : tools));
  return [...own, ...servers].join(', ');
}
