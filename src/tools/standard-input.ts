/**
 * A tool whose input schema is a Standard Schema (zod 4, valibot, arktype). The model is sent,
 * and the run pins, a JSON Schema that the schema library itself made; the input is checked by
 * the schema's own validate(), and run() gets what validate() gives (defaults and transforms
 * applied). Everything downstream (the registry's specs, the schema hash of a run's origin, the
 * check of a decision's pin) reads the JSON Schema only, as for a tool defined with one.
 */
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';
import { redactSecrets } from '../util/redact.ts';
import { describeThrown } from './recordable.ts';
import type { StandardJSONSchemaV1, StandardSchemaV1 } from './standard-schema.ts';

/**
 * draft-2020-12 first: the dialect MCP's specification gives tool schemas by default, and the one
 * the Anthropic SDK's own zod helper sends (zod's default). draft-07 for a library that has only it.
 */
const TARGETS: readonly StandardJSONSchemaV1.Target[] = ['draft-2020-12', 'draft-07'];

export type ToolInputSchemaProblem = 'no-validate' | 'no-json-schema' | 'conversion-failed';

/** A tool's Standard Schema cannot serve as its input schema; the tool was not defined. */
export class ToolInputSchemaError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'ToolInputSchemaError';
  constructor(
    readonly toolName: string,
    /** The schema library, as the schema names it (`~standard.vendor`). */
    readonly vendor: string,
    readonly reason: ToolInputSchemaProblem,
    /** What the conversion said (conversion-failed), else null. */
    readonly problem: string | null,
  ) {
    super(messageOf(toolName, vendor, reason, problem));
  }
}

function messageOf(toolName: string, vendor: string, reason: ToolInputSchemaProblem, problem: string | null): string {
  const what = `The input schema of tool "${toolName}" (a ${vendor} schema)`;
  const give = 'give the definition its input\'s JSON Schema as `jsonSchema` (the schema library\'s own converter makes it)';
  switch (reason) {
    case 'no-validate':
      return `${what} has a "~standard" property but no validate() function, so it is no Standard Schema and input could not be checked. Give a Standard Schema (zod 4, valibot, arktype) or a plain JSON Schema object.`;
    case 'no-json-schema':
      return `${what} offers no JSON Schema (no ~standard.jsonSchema, the Standard JSON Schema interface), and the model must be sent one: ${give}, or use a version of ${vendor} that implements Standard JSON Schema.`;
    case 'conversion-failed':
      return `${what} could not be converted to JSON Schema: ${problem}. The model sends JSON, so its input schema must describe JSON: change the schema (e.g. a string where it takes a Date), or ${give}.`;
  }
}

export function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  // An arktype schema is a function; a zod or valibot schema an object.
  return (typeof schema === 'object' || typeof schema === 'function') && schema !== null && '~standard' in schema;
}

/**
 * The validator of each JSON Schema made here, by the JSON Schema object itself: a definition
 * copied with its schema ({ ...tool }) keeps its validator, and one given another schema
 * ({ ...tool, inputSchema }) is validated by that schema, so the schema a run pins and the one
 * that checks the input cannot part.
 */
const validators = new WeakMap<object, StandardSchemaV1>();

/** The Standard Schema whose JSON Schema this is, if it is one made by {@link standardJsonSchema}. */
export function standardSchemaOf(jsonSchema: object): StandardSchemaV1 | undefined {
  return validators.get(jsonSchema);
}

/**
 * The JSON Schema of a Standard Schema's input: the one the definition gives (`jsonSchema`), else
 * the library's own conversion (Standard JSON Schema); throws ToolInputSchemaError when there is none.
 */
export function standardJsonSchema(toolName: string, schema: StandardSchemaV1, given: unknown): Record<string, unknown> {
  const props = schema['~standard'] as Partial<StandardSchemaV1.Props & StandardJSONSchemaV1.Props> | undefined;
  const vendor = typeof props?.vendor === 'string' ? props.vendor : 'unknown';
  if (typeof props?.validate !== 'function') throw new ToolInputSchemaError(toolName, vendor, 'no-validate', null);
  const converted = given !== undefined ? { schema: given } : convert(props.jsonSchema);
  if (!converted) throw new ToolInputSchemaError(toolName, vendor, 'no-json-schema', null);
  if ('problem' in converted) throw new ToolInputSchemaError(toolName, vendor, 'conversion-failed', converted.problem);
  const { schema: json } = converted;
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    const source = given !== undefined ? 'the jsonSchema given is' : 'the conversion gave';
    throw new ToolInputSchemaError(toolName, vendor, 'conversion-failed', `${source} ${Array.isArray(json) ? 'an array' : String(json)}, not a JSON Schema object`);
  }
  // A copy of our own: what is sent and hashed is JSON, and this object is the validator's key alone.
  const copy = JSON.parse(JSON.stringify(json)) as Record<string, unknown>;
  validators.set(copy, schema);
  return copy;
}

function convert(converter: StandardJSONSchemaV1.Converter | undefined): { schema: unknown } | { problem: string } | null {
  if (typeof converter?.input !== 'function') return null;
  let first: string | undefined;
  for (const target of TARGETS) {
    try {
      return { schema: converter.input({ target }) };
    } catch (error) {
      first ??= describeThrown(error);
    }
  }
  return { problem: first! };
}

export type CheckedInput = { input: unknown } | { problem: string };

/** The schema's output for this input, or what is wrong with the input (as the model is told it). */
export async function checkStandardInput(schema: StandardSchemaV1, input: unknown): Promise<CheckedInput> {
  let result: StandardSchemaV1.Result<unknown>;
  try {
    result = await schema['~standard'].validate(input);
  } catch (error) {
    // The message goes to the model and into the ledger, as a tool's own error does.
    return { problem: `its schema's validate() failed: ${redactSecrets(describeThrown(error))}` };
  }
  if (!result.issues) return { input: result.value };
  return { problem: result.issues.map((issue) => `${pointerOf(issue.path) || 'input'}: ${issue.message}`).join('; ') || 'input is invalid' };
}

/** An issue's path as a JSON Pointer, the form ajv gives the place of a JSON Schema tool's problem in. */
function pointerOf(path: StandardSchemaV1.Issue['path']): string {
  return (path ?? [])
    .map((segment) => {
      const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
      return `/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`;
    })
    .join('');
}
