/**
 * Runs one tool call and turns whatever happens into an outcome for the ledger. Nothing a tool
 * does can break the loop: unknown tools, bad input, a throw (of anything), a hang and a result
 * the ledger cannot hold all become an is_error tool_result the model can read.
 */
import { createHash } from 'node:crypto';
import type { PendingCall, ToolOutcome, ToolResultContent } from '../../machines/agent-loop.types.ts';
import { DurableAgentError } from '../util/durable-agent-error.ts';
import { redactSecrets } from '../util/redact.ts';
import { callDeadlines } from './call-deadlines.ts';
import { describeThrown, recordableContent, unrecordableOutcome } from './recordable.ts';
import { readOnlyFor, type ToolContext, type VerifyAnswer } from './tool.ts';
import type { CallingRun } from './calling-run.ts';
import type { ToolRegistry } from './tool-registry.ts';

export const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

export function idempotencyKeyFor(runId: string, toolUseId: string): string {
  return `da_${createHash('sha256').update(`${runId}/${toolUseId}`).digest('hex').slice(0, 32)}`;
}

/**
 * The key is hashed, and the signal made, when the tool first reads them: most tools read
 * neither, and a SHA-256 and an AbortController per call were half of executeCall's CPU (profile of the bench's in-memory loop).
 */
export function toolContextFor(runId: string, call: PendingCall, signal: AbortSignal | LazyAbort, caller?: CallingRun): ToolContext {
  return new CallContext(runId, call, signal, caller) as unknown as ToolContext;
}

/** Hands back the object it is given, so that a subclass's private fields are set on a plain object. */
class PlainObject {
  constructor(object: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the context stays a plain object (its prototype, its own keys), with private fields
    return object;
  }
}

/**
 * A tool's context: a plain object with the own, enumerable keys an object literal with two getters
 * had (caller when given, toolUseId, runId, idempotencyKey, signal, in that order; a copy of it reads
 * the getters), made without one. Such a literal is built by the runtime, property by property, with
 * two new closures each time: about 5 µs a call, a tenth of a turn of the bench's in-memory loop.
 * Its getters are defined once and read the call from private fields.
 */
class CallContext extends PlainObject {
  #runId: string;
  #call: PendingCall;
  #signal: AbortSignal | LazyAbort;
  #key: string | undefined;

  static readonly #idempotencyKey: PropertyDescriptor = {
    get(this: CallContext) {
      return (this.#key ??= idempotencyKeyFor(this.#runId, this.#call.id));
    },
    enumerable: true,
    configurable: true,
  };

  static readonly #abortSignal: PropertyDescriptor = {
    get(this: CallContext) {
      const signal = this.#signal;
      return signal instanceof LazyAbort ? signal.signal : signal;
    },
    enumerable: true,
    configurable: true,
  };

  constructor(runId: string, call: PendingCall, signal: AbortSignal | LazyAbort, caller: CallingRun | undefined) {
    super(caller ? { caller, toolUseId: call.id, runId } : { toolUseId: call.id, runId });
    this.#runId = runId;
    this.#call = call;
    this.#signal = signal;
    this.#key = undefined;
    Object.defineProperty(this, 'idempotencyKey', CallContext.#idempotencyKey);
    Object.defineProperty(this, 'signal', CallContext.#abortSignal);
  }
}

/** An AbortController made only once its signal is read or it is aborted (then aborted as asked). */
export class LazyAbort {
  private controller: AbortController | null = null;

  get signal(): AbortSignal {
    return (this.controller ??= new AbortController()).signal;
  }

  abort(reason: unknown): void {
    (this.controller ??= new AbortController()).abort(reason);
  }
}

export async function executeCall(
  registry: ToolRegistry,
  runId: string,
  call: PendingCall,
  defaultTimeoutMs = DEFAULT_TOOL_TIMEOUT_MS,
  /** Aborted when the run is cancelled or paused meanwhile: the tool's signal is aborted too, and the tool still awaited. */
  stop?: AbortSignal,
  /** The run making the call, for a tool that runs a run under it (ToolContext.caller). */
  caller?: CallingRun,
): Promise<ToolOutcome> {
  const tool = registry.get(call.name);
  if (!tool) {
    return outcome(call, 'rejected', `Unknown tool "${call.name}". The tools available are: ${registry.names.join(', ') || 'none'}.`, true);
  }
  // Checked at once where the schema allows it (a JSON Schema): an await less, at every call.
  const checking = registry.inputChecked(call.name, call.input);
  const checked = checking instanceof Promise ? await checking : checking;
  if ('problem' in checked) {
    return outcome(call, 'rejected', `Invalid input for ${call.name}: ${checked.problem}. The tool was not run; call it again with input that matches its schema.`, true);
  }
  const timeoutMs = tool.timeoutMs ?? defaultTimeoutMs;
  const controller = new LazyAbort();
  // Made only for a run that can be stopped, and not as a named arrow (a build that keeps function names, tsx, names one at every call).
  const onStop = stop && (() => controller.abort(stop.reason));
  if (onStop) {
    if (stop.aborted) onStop();
    else stop.addEventListener('abort', onStop, { once: true });
  }
  const settled = withTimeout(() => tool.run(checked.input, toolContextFor(runId, call, controller, caller)), timeoutMs, controller);
  const result = onStop
    ? await settled.finally(() => {
        stop.removeEventListener('abort', onStop);
      })
    : await settled;
  if (result.kind === 'timed-out') {
    const hint = readOnlyFor(tool, call.input) ? '' : ' It may still take effect: check before calling it again.';
    return outcome(call, 'timed-out', `${call.name} did not finish within ${timeoutMs} ms and was abandoned.${hint}`, true);
  }
  // A tool that stopped because a run under it stopped (a sub-agent's run, a drill's kill) did not fail: no outcome
  // is recorded, the run stops too, and its resume settles the call as any call a stop left open. A tool that gives
  // up because this run asked it to (the cancel it was handed through ctx.signal) did fail: that outcome is recorded.
  if (result.kind === 'threw' && result.error instanceof DurableAgentError && result.error.kind === 'stopped' && result.error !== stop?.reason) throw result.error;
  if (result.kind === 'threw') return outcome(call, 'threw', `${call.name} failed: ${messageOf(result.error)}`, true);
  const recordable = recordableContent(result.value);
  if ('unrecordable' in recordable) return unrecordableOutcome(call, recordable.unrecordable);
  return outcome(call, 'ran', recordable.content, false);
}

/** verify()'s answer with its result as the tool_result holds it. */
export interface VerifiedAnswer {
  happened: boolean;
  result?: ToolResultContent | undefined;
}

/** Asks a tool whether a call's effect already happened; undefined when it cannot tell. */
/** What a tool's `verify` said of a call: whether it took effect, or that it cannot tell (and why). */
export type Verdict = { answer: VerifiedAnswer } | { cannotTell: string };

export async function verifyCall(
  registry: ToolRegistry,
  runId: string,
  call: PendingCall,
  defaultTimeoutMs = DEFAULT_TOOL_TIMEOUT_MS,
): Promise<Verdict> {
  const tool = registry.get(call.name);
  if (!tool?.verify) return { cannotTell: 'the tool offers no verify()' };
  const typed = await registry.typedInput(call.name, call.input);
  // Its run() never took this input (it was refused before running), unless the schema's checks changed since: say so rather than guess.
  if ('problem' in typed) return { cannotTell: `its input does not fit the tool's input schema now (${typed.problem}), so verify() was not asked` };
  const controller = new LazyAbort();
  const verify = tool.verify.bind(tool);
  const result = await withTimeout(() => verify(typed.input, toolContextFor(runId, call, controller)), tool.timeoutMs ?? defaultTimeoutMs, controller);
  if (result.kind === 'timed-out') return { cannotTell: 'verify() timed out' };
  if (result.kind === 'threw') return { cannotTell: `verify() failed: ${messageOf(result.error)}` };
  return verifyAnswerOf(call, result.value);
}

/**
 * verify()'s answer, with a result the ledger can hold; an answer that cannot be read cannot tell.
 * Its result is made content as run()'s value is (recordableContent), so the model reads a
 * verified call as it would have read the call run.
 */
function verifyAnswerOf(call: PendingCall, value: VerifyAnswer | undefined): { answer: VerifiedAnswer } | { cannotTell: string } {
  try {
    if (!value || typeof value.happened !== 'boolean') return { cannotTell: 'verify() could not tell' };
    if (value.result === undefined) return { answer: { happened: value.happened } };
    const recordable = recordableContent(value.result);
    if ('content' in recordable) return { answer: { happened: value.happened, result: recordable.content } };
    const result = `${call.name} had already taken effect before the resume (confirmed by checking); it was not run again. The result verify() gave could not be recorded: ${recordable.unrecordable}.`;
    return { answer: { happened: value.happened, result } };
  } catch (error) {
    return { cannotTell: `verify()'s answer could not be read: ${messageOf(error)}` };
  }
}

export function outcome(call: PendingCall, kind: ToolOutcome['kind'], content: ToolResultContent, isError: boolean): ToolOutcome {
  return { tool_use_id: call.id, name: call.name, kind, content, is_error: isError };
}

type Settled<T> = { kind: 'value'; value: T } | { kind: 'threw'; error: unknown } | { kind: 'timed-out' };

/**
 * What `start` gives or throws, or that it timed out. Its value is taken as an async function's
 * return would be (a promise or thenable is waited for), without one: an async frame a call.
 */
function withTimeout<T>(start: () => T | PromiseLike<T>, ms: number, controller: LazyAbort): Promise<Settled<Awaited<T>>> {
  return new Promise<Settled<Awaited<T>>>((resolve) => {
    const deadline = callDeadlines.add(ms, () => {
      controller.abort(new Error(`timed out after ${ms} ms`));
      resolve({ kind: 'timed-out' });
    });
    let running: T | PromiseLike<T>;
    try {
      running = start();
    } catch (error) {
      running = Promise.reject(error);
    }
    Promise.resolve(running).then(
      (value) => {
        callDeadlines.clear(deadline);
        resolve({ kind: 'value', value });
      },
      (error: unknown) => {
        callDeadlines.clear(deadline);
        resolve({ kind: 'threw', error });
      },
    );
  });
}

/** A tool's error goes to the model and into the ledger: an echoed key or password must not. */
function messageOf(error: unknown): string {
  return redactSecrets(describeThrown(error));
}
