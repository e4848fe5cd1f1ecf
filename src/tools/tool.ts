/** How a user defines a tool the agent may call. */
import { isStandardSchema, standardJsonSchema } from './standard-input.ts';
import type { StandardSchemaV1 } from './standard-schema.ts';
import type { CallCharge, CallingRun } from './calling-run.ts';

export type { StandardJSONSchemaV1, StandardSchemaV1 } from './standard-schema.ts';
export type { CallCharge, CallingRun, CallTrace } from './calling-run.ts';

export type JsonSchema = Record<string, unknown>;

export interface ToolContext {
  readonly toolUseId: string;
  /**
   * Stable for this call across crashes and resumes (derived from the run and the tool_use_id):
   * hand it to the outside world (an API's Idempotency-Key, a unique column) so that a repeat
   * of the same call cannot repeat its effect.
   */
  readonly idempotencyKey: string;
  readonly runId: string;
  /**
   * Aborted when the call runs past its time limit, or when the run is cancelled meanwhile. A
   * pause does not abort it: the call finishes, its outcome is recorded, then the run pauses.
   */
  readonly signal: AbortSignal;
  /**
   * The run making the call (its store, budget and trace), for a tool that runs a run of its own
   * under the call (a sub-agent). Absent where no run drives the call (verify()).
   */
  readonly caller?: CallingRun | undefined;
}

/** What verify() found: whether the call's effect had happened before the resume. */
export interface VerifyAnswer {
  happened: boolean;
  /**
   * When it had happened: what the call gave, as run() returns it (text, content blocks, or any
   * JSON value), and the model gets it rendered exactly as it gets run()'s value, so a call that
   * ran and one that was verified read the same. Absent: a sentence saying it had taken effect.
   */
  result?: unknown;
}

/** The behaviour hints of the Model Context Protocol (all optional; MCP assumes the worst when absent). */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface TraitSources {
  readOnly?: string;
  idempotent?: string;
  verify?: string;
}

/** All of a tool's definition but its input schema, whichever kind of schema that is. */
// biome-ignore lint/suspicious/noExplicitAny: a bare ToolBase takes any tool, whatever its input type (run and verify take the input)
export interface ToolBase<Input = any> {
  name: string;
  description: string;
  /** True when running the tool twice does no harm: a resume then simply runs it again. */
  readOnly: boolean;
  /**
   * For a tool that is read-only for some calls only (a text editor's `view`, a shell's declared
   * read-only commands): true for a call whose input makes it read-only. Consulted only when
   * `readOnly` is false, with the input as the model sent it (before a Standard Schema's
   * transforms); a throw counts as not read-only. Everything that treats calls by their effect
   * asks readOnlyFor(tool, input): the resume's rule, the scheduler, the approval of side effects.
   */
  readOnlyWhen?: ((input: unknown) => boolean) | undefined;
  /**
   * True when the same call made again has no further effect (it changes things, but a second
   * time changes nothing more: "set X to 5", "write this content to this file"). A resume then
   * runs a call whose result it did not record again, like a read-only one. Default false.
   */
  idempotent?: boolean | undefined;
  /**
   * True when calls of this tool may run beside the other calls of the same reply although it
   * is not read-only (e.g. it appends to a log of its own). Read-only tools always may; any
   * other call runs alone, in the model's order (see runtime/tool-scheduler.ts). Default false.
   */
  concurrencySafe?: boolean | undefined;
  /**
   * Hints about the tool's behaviour as an MCP server gives them; pinned in the journal's header
   * with the input schema, so a resume notices a tool whose contract changed.
   */
  annotations?: ToolAnnotations | undefined;
  /** Where readOnly, idempotent and verify came from (e.g. an MCP server's hint), shown with reconcile decisions. */
  traitSources?: TraitSources | undefined;
  /** Per-call time limit in milliseconds (default: the runtime's). */
  timeoutMs?: number | undefined;
  /**
   * Whether a call needs a person's approval before it runs: always (true), or when this
   * function of the call's input says so (a throw counts as yes). Evaluated once, when the
   * model's reply arrives, and kept in the journal: a resume does not ask again. A Standard
   * Schema tool's function gets the schema's output; input the schema refuses needs no
   * approval, since it is rejected without running.
   */
  needsApproval?: boolean | ((input: Input) => boolean) | undefined;
  run(input: Input, context: ToolContext): Promise<unknown> | unknown;
  /**
   * Optional: what a call spent on the run's behalf beyond the run's own model calls (a
   * sub-agent's child run), asked when the call's turn closes and counted in the run's usage
   * and budget in the same write as the close, so that it is counted once. Null: nothing.
   */
  charge?(input: Input, context: ToolContext): Promise<CallCharge | null> | CallCharge | null;
  /**
   * Optional: checks whether the effect of this call already happened. Resolving undefined (or
   * throwing) means it cannot tell; the resume then reports the state as unknown.
   */
  verify?(input: Input, context: ToolContext): Promise<VerifyAnswer | undefined> | VerifyAnswer | undefined;
}

/** A tool as the runtime takes it: its input schema is JSON Schema (defineTool makes one from a Standard Schema). */
// biome-ignore lint/suspicious/noExplicitAny: a bare ToolDefinition (a list of tools) takes any tool, whatever its input type
export interface ToolDefinition<Input = any> extends ToolBase<Input> {
  /** JSON Schema of the input; input that does not match is rejected before the tool runs. */
  inputSchema: JsonSchema;
  /**
   * Set for a client tool the Messages API defines itself (text editor, memory, bash): the
   * request names it `{ type, name, ...options }` instead of sending the description and the
   * schema, which Claude already knows. Its run() is still ours, inputSchema still checks the
   * input before it runs, and the type and options are pinned with the schema, so a resume
   * notices a tool that changed version.
   */
  anthropicDefined?: AnthropicDefinedType | undefined;
}

/** How the request names an Anthropic-defined tool. */
export interface AnthropicDefinedType {
  /** The API's versioned type, e.g. `text_editor_20250728`. */
  type: string;
  /** The type's own fields sent beside it, e.g. `{ max_characters: 10000 }` (never `type` or `name`). */
  options?: Readonly<Record<string, unknown>> | undefined;
}

/** Whether this call of the tool is read-only: always for a read-only tool, else as its readOnlyWhen says of the input. */
export function readOnlyFor(tool: Pick<ToolBase, 'readOnly' | 'readOnlyWhen'>, input: unknown): boolean {
  if (tool.readOnly) return true;
  if (!tool.readOnlyWhen) return false;
  try {
    return tool.readOnlyWhen(input) === true;
  } catch {
    // A predicate that cannot decide must not let a side effect pass as harmless to repeat.
    return false;
  }
}

/**
 * A tool whose input schema is a Standard Schema (zod 4, valibot, arktype): run(), verify() and
 * needsApproval take the schema's output, typed by it, and get it with the schema's defaults and
 * transforms applied (the journal keeps the input as the model sent it).
 */
export interface StandardSchemaToolDefinition<Schema extends StandardSchemaV1 = StandardSchemaV1> extends ToolBase<StandardSchemaV1.InferOutput<Schema>> {
  /** Input that the schema's validate() refuses is rejected before the tool runs, as input that does not match a JSON Schema is. */
  inputSchema: Schema;
  /**
   * The JSON Schema of the input, sent to the model and pinned by the run. Only for a schema
   * that cannot make its own (Standard JSON Schema, which zod 4 implements); given, it is used
   * instead of the schema's own.
   */
  jsonSchema?: JsonSchema | undefined;
}

/**
 * A tool the agent may call. With a JSON Schema, run() takes the input as the model sent it,
 * typed as the type argument says; with a Standard Schema, run() takes the schema's output and
 * its type is inferred. The definition returned holds a JSON Schema either way; one a Standard
 * Schema cannot give is refused here (ToolInputSchemaError), not when a run starts.
 */
export function defineTool<Schema extends StandardSchemaV1>(definition: StandardSchemaToolDefinition<Schema>): ToolDefinition<StandardSchemaV1.InferOutput<Schema>>;
// biome-ignore lint/suspicious/noExplicitAny: without a type argument, run() takes the input as the model sent it, untyped
export function defineTool<Input = any>(definition: ToolDefinition<Input>): ToolDefinition<Input>;
export function defineTool(definition: ToolDefinition | StandardSchemaToolDefinition): ToolDefinition {
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(definition.name)) {
    throw new Error(`Tool name "${definition.name}" is not allowed: use 1 to 64 letters, digits, "_" or "-".`);
  }
  if (typeof definition.run !== 'function') throw new Error(`Tool "${definition.name}" has no run(input, context) function.`);
  if (!isStandardSchema(definition.inputSchema)) return definition as ToolDefinition;
  const { inputSchema, jsonSchema, ...rest } = definition as StandardSchemaToolDefinition;
  return { ...rest, inputSchema: standardJsonSchema(definition.name, inputSchema, jsonSchema) };
}
