/** The tools of one run: lookup by name, input validation, and the specs sent to the model. */
import { Ajv, type ValidateFunction } from 'ajv';
import type { ToolSpec } from '../model/model.ts';
import { type CheckedInput, checkStandardInput, standardSchemaOf } from './standard-input.ts';
import type { StandardSchemaV1 } from './standard-schema.ts';
import type { ToolDefinition } from './tool.ts';

/**
 * Compiling a schema costs far more than a whole scripted run; a process that drives many runs
 * (a worker, a test suite) compiles each distinct schema once.
 */
const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new Map<string, ValidateFunction>();

function validatorFor(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}

/**
 * What the request says of a tool: ours by description and schema; one the API defines by its
 * type (and the type's options), since the API refuses a schema beside it and Claude knows both.
 */
export function specOf(tool: ToolDefinition): ToolSpec {
  const defined = tool.anthropicDefined;
  if (!defined) return { name: tool.name, description: tool.description, input_schema: tool.inputSchema };
  return { ...defined.options, type: defined.type, name: tool.name };
}

export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private readonly validators = new Map<string, ValidateFunction>();
  /** The tools defined with a Standard Schema: its validate() checks their input, not ajv. */
  private readonly standard = new Map<string, StandardSchemaV1>();
  readonly specs: readonly ToolSpec[];

  constructor(tools: readonly ToolDefinition[]) {
    for (const tool of tools) {
      if (this.tools.has(tool.name)) throw new Error(`Two tools are named "${tool.name}"; tool names must be unique.`);
      const standard = standardSchemaOf(tool.inputSchema);
      if (standard) {
        this.tools.set(tool.name, tool);
        this.standard.set(tool.name, standard);
        continue;
      }
      let validate: ValidateFunction;
      try {
        validate = validatorFor(tool.inputSchema);
      } catch (error) {
        throw new Error(`Tool "${tool.name}" has an invalid input schema: ${(error as Error).message}`);
      }
      this.tools.set(tool.name, tool);
      this.validators.set(tool.name, validate);
    }
    this.specs = tools.map(specOf);
  }

  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  get names(): string[] {
    return [...this.tools.keys()];
  }

  /**
   * The input as the tool's run() takes it, or what is wrong with it: for a Standard Schema, the
   * schema's output (its defaults and transforms applied); for a JSON Schema, the input itself.
   */
  async checkInput(name: string, input: unknown): Promise<CheckedInput> {
    return this.inputChecked(name, input);
  }

  /** checkInput's answer, at once for a JSON Schema (checked where it is given); a promise only for a Standard Schema. */
  inputChecked(name: string, input: unknown): CheckedInput | Promise<CheckedInput> {
    const standard = this.standard.get(name);
    if (standard) return checkStandardInput(standard, input);
    const problem = this.jsonInputProblem(name, input);
    return problem === null ? { input } : { problem };
  }

  /**
   * The input verify() and needsApproval take: a Standard Schema's output, which their type
   * promises; for a JSON Schema tool the input as it is, unchecked, as they have always had it.
   */
  async typedInput(name: string, input: unknown): Promise<CheckedInput> {
    return this.standard.has(name) ? this.checkInput(name, input) : { input };
  }

  /** Null when the input matches the tool's JSON Schema, else what is wrong with it. */
  private jsonInputProblem(name: string, input: unknown): string | null {
    const validate = this.validators.get(name);
    if (!validate || validate(input)) return null;
    return (validate.errors ?? [])
      .map((error) => `${error.instancePath || 'input'} ${error.message ?? 'is invalid'}`)
      .join('; ');
  }
}
