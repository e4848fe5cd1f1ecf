/**
 * A run's events as OpenTelemetry spans. Loaded only when a tracer is given: the runtime knows
 * nothing of OpenTelemetry, this module only listens to what it reports.
 *
 * The shape a backend shows, one trace per run:
 *   durable-agent run            the root, made by the process that starts the run and ended once
 *                                the journal exists (so it is exported early, before any crash)
 *   ├ durable-agent start        one span per process session: the process that started the run,
 *   │  ├ save save-start         then each process that resumed it (after a crash, a kill, on
 *   │  ├ chat <model>            another worker), all under the root, whose context the journal's
 *   │  ├ execute_tool <tool>     header keeps. A crash, a resume, a lock or lease taken over, a
 *   │  └ …                       fencing refusal are events of the session spans.
 *   └ durable-agent resume
 * Under an application's own span (the `tracer` option called inside one), the run's root and a
 * resume's session are children of that span instead, and a resume links to the run's root.
 */
import {
  type Attributes,
  type AttributeValue,
  type Context,
  context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import type { TokenUsage } from '../../machines/agent-loop.types.ts';
import type { CallView, RunEvent, RunObserver } from '../core/run-events.ts';
import type { JournalHeader, ReconcileOutcomeName, RunTraceContext } from '../store/journal/journal-record.ts';
import { redactSecrets } from '../util/redact.ts';
import { mapPayloadBlocks, withoutPayloadBytes } from '../util/rich-blocks.ts';

export interface RunTracingOptions {
  /**
   * Export messages, tool inputs and tool results too (redacted); off by default. For a sealed
   * run, only while this process holds its key (see contentExported): a trace never carries a
   * sealed run's content its reader could not open, and never a sealed string.
   */
  content: boolean;
  /** What drives the run: 'demo', 'run', 'worker', 'api'. */
  command: string;
  /** Starting a run or resuming one. */
  session: 'start' | 'resume';
  /** The context the run hangs under instead of the active one (a sub-agent's run: its parent's execute_tool span). */
  parent?: Context | undefined;
}

/** The longest content attribute exported; the history grows with every turn. */
const MAX_CONTENT_CHARS = 64 * 1024;

/** Decisions for which the call is not run again: its tool span records the decision alone. */
const SETTLED_WITHOUT_RUNNING: readonly ReconcileOutcomeName[] = ['reused', 'verified-done', 'unknown-reported'];

/** Sessions of this process not ended yet: a process about to exit ends them first (see endOpenSessions). */
const openSessions = new Set<RunTracing>();

/** Why a process ends its open sessions before exiting: a span event and the status it sets. */
export interface SessionEnd {
  event: string;
  attributes: Attributes;
  description: string;
}

/**
 * Ends every session span still open in this process, with an event saying why (a simulated
 * crash, an interrupt): called just before the process exits, then the exporter is flushed.
 */
export function endOpenSessions(why: SessionEnd): void {
  for (const tracing of [...openSessions]) tracing.abandon(why);
}

export class RunTracing {
  readonly observer: RunObserver;
  private root: Span | null = null;
  private session: Span | null = null;
  private sessionContext: Context = ROOT_CONTEXT;
  private readonly startedAt = Date.now();
  /** Events that came before the session span could be made (a lock taken over before the journal was read). */
  private readonly early: Array<{ name: string; attributes: Attributes; at: number }> = [];
  private modelSpan: Span | null = null;
  private readonly toolSpans = new Map<string, Span>();
  private readonly decisions = new Map<string, { decision: ReconcileOutcomeName; detail: string | null }>();
  private runId: string | null = null;
  private ended = false;
  /** Whether the run is sealed, and whether this process holds its key (see runSealing). */
  private sealing: { sealed: boolean; keyHeld: boolean } = { sealed: false, keyHeld: false };

  constructor(
    private readonly tracer: Tracer,
    private readonly options: RunTracingOptions,
  ) {
    openSessions.add(this);
    this.observer = (event) => {
      try {
        this.take(event);
      } catch {
        // Traces are a view of the run: a failure to make one never stops the run.
      }
    };
  }

  /**
   * Called by a process that starts a run, before the journal is created: makes the run's root
   * span and this session under it, and returns the root's context for the journal's header
   * (null when the tracer records nothing, e.g. a no-op tracer).
   */
  beginRun(runId: string, facts: { model: string; task: string; maxTurns: number }): RunTraceContext | null {
    this.runId = runId;
    const parent = this.options.parent ?? context.active();
    this.root = this.tracer.startSpan(
      'durable-agent run',
      {
        kind: SpanKind.INTERNAL,
        startTime: this.startedAt,
        attributes: this.clean({
          ...this.runAttributes(),
          'gen_ai.request.model': facts.model,
          'durable_agent.max_turns': facts.maxTurns,
          ...(this.contentExported ? { 'durable_agent.task': this.content(facts.task) } : {}),
        }),
      },
      parent,
    );
    this.openSession(trace.setSpan(parent, this.root), []);
    const span = this.root.spanContext();
    if (!trace.isSpanContextValid(span)) return null;
    return { traceId: span.traceId, spanId: span.spanId, traceFlags: span.traceFlags };
  }

  /**
   * Called by a process that resumes a run, once its header is read: this session joins the
   * run's trace under its root (or, inside an application's span, under that span, linked to
   * the run's root). A journal without a trace context gets a trace of its own for this session.
   */
  joinRun(header: JournalHeader): void {
    this.runId = header.runId;
    // Joined once the run was loaded to be written: a sealed one only loads so with its key.
    this.sealing = { sealed: header.sealed !== undefined, keyHeld: header.sealed !== undefined };
    const stored = spanContextOf(header.trace);
    const active = this.options.parent ?? context.active();
    const inApplicationSpan = trace.getSpan(active) !== undefined;
    if (inApplicationSpan) this.openSession(active, stored ? [{ context: stored, attributes: { 'durable_agent.link': 'run' } }] : []);
    else this.openSession(stored ? trace.setSpanContext(ROOT_CONTEXT, stored) : ROOT_CONTEXT, []);
  }

  /** The context of a running call's execute_tool span, for a run the call makes (a sub-agent's); undefined once the call ended. */
  callContext(toolUseId: string): Context | undefined {
    const span = this.toolSpans.get(toolUseId);
    return span ? trace.setSpan(this.sessionContext, span) : undefined;
  }

  /** With content exported or not (a sub-agent's run is traced the same way). */
  get exportsContent(): boolean {
    return this.contentExported;
  }

  /**
   * The policy, in one place: content attributes leave only when content was asked for AND, for
   * a sealed run, this process holds its key. A process that drives a sealed run always does (a
   * writer without it is refused), so asking is what decides there; the check keeps a run read
   * sealed from ever putting its sealed strings, or nothing, where its content would go.
   */
  private get contentExported(): boolean {
    return this.options.content && (!this.sealing.sealed || this.sealing.keyHeld);
  }

  /**
   * What the process knows of the run's sealing once its store was created or loaded: whether it
   * is sealed, and whether its key was opened here. The session span says so (durable_agent.sealed).
   */
  runSealing(sealing: { sealed: boolean; keyHeld: boolean }): void {
    this.sealing = sealing;
    if (sealing.sealed) this.session?.setAttribute('durable_agent.sealed', true);
  }

  /** The tracer the run is traced into. */
  get usedTracer(): Tracer {
    return this.tracer;
  }

  /** Ends the session: normally (error null) or with what stopped it. */
  end(error: unknown): void {
    if (this.ended) return;
    if (!this.session) this.openSession(context.active(), []);
    const session = this.session!;
    if (error !== null && error !== undefined) {
      const name = error instanceof Error ? error.name : 'Error';
      const message = redactSecrets(error instanceof Error ? error.message : String(error));
      switch (name) {
        case 'SimulatedCrash':
          session.addEvent('durable_agent.crash', { 'durable_agent.crash.label': (error as { label?: string }).label ?? '', 'durable_agent.crash.simulated': true });
          session.setStatus({ code: SpanStatusCode.ERROR, message: message });
          break;
        case 'LeaseLostError':
        case 'RunLockLostError':
          session.addEvent('durable_agent.fenced', { 'error.type': name, 'durable_agent.fenced.reason': message });
          session.setStatus({ code: SpanStatusCode.ERROR, message: message });
          break;
        case 'RunStoppedError':
        case 'RunPausedError':
          session.addEvent('durable_agent.stopped', { 'durable_agent.stopped.reason': message });
          break;
        default:
          session.addEvent('exception', { 'exception.type': name, 'exception.message': message });
          session.setAttribute('error.type', name);
          session.setStatus({ code: SpanStatusCode.ERROR, message: message });
      }
    }
    this.close();
  }

  /** Ends the session because the process is about to exit (see endOpenSessions). */
  abandon(why: SessionEnd): void {
    if (this.ended) return;
    if (!this.session) this.openSession(context.active(), []);
    this.session!.addEvent(why.event, this.clean(why.attributes));
    this.session!.setStatus({ code: SpanStatusCode.ERROR, message: redactSecrets(why.description) });
    this.close();
  }

  private close(): void {
    this.ended = true;
    openSessions.delete(this);
    const unfinished = { 'durable_agent.unfinished': true };
    const description = 'the process stopped before it returned';
    if (this.modelSpan) endSpan(this.modelSpan, unfinished, description);
    for (const span of this.toolSpans.values()) endSpan(span, unfinished, description);
    this.modelSpan = null;
    this.toolSpans.clear();
    this.root?.end();
    this.root = null;
    this.session?.end();
  }

  private openSession(parent: Context, links: Link[]): void {
    this.session = this.tracer.startSpan(
      `durable-agent ${this.options.session}`,
      { kind: SpanKind.INTERNAL, startTime: this.startedAt, links, attributes: this.clean(this.runAttributes()) },
      parent,
    );
    this.sessionContext = trace.setSpan(parent, this.session);
    if (this.sealing.sealed) this.session.setAttribute('durable_agent.sealed', true);
    for (const event of this.early.splice(0)) this.session.addEvent(event.name, event.attributes, event.at);
  }

  private runAttributes(): Attributes {
    return {
      ...(this.runId ? { 'durable_agent.run.id': this.runId, 'gen_ai.conversation.id': this.runId } : {}),
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'durable-agent',
      'durable_agent.command': this.options.command,
      'durable_agent.session': this.options.session,
      'process.pid': process.pid,
    };
  }

  private sessionEvent(name: string, attributes: Attributes): void {
    const clean = this.clean(attributes);
    if (this.session) this.session.addEvent(name, clean);
    else this.early.push({ name, attributes: clean, at: Date.now() });
  }

  private child(name: string, kind: SpanKind, attributes: Attributes, startTime?: number): Span {
    return this.tracer.startSpan(name, { kind, attributes: this.clean(attributes), ...(startTime ? { startTime } : {}) }, this.sessionContext);
  }

  private take(event: RunEvent): void {
    if (this.ended) return;
    switch (event.type) {
      case 'started':
        this.root?.setAttribute('durable_agent.store', redactSecrets(event.location));
        this.root?.end();
        this.root = null;
        this.session?.setAttributes(this.clean({ 'gen_ai.request.model': event.model, 'durable_agent.max_turns': event.maxTurns, 'durable_agent.store': event.location }));
        if (event.archivedPrevious) this.sessionEvent('durable_agent.archived_previous', { 'durable_agent.archived_to': event.archivedPrevious });
        return;
      case 'resumed': {
        this.session?.setAttributes(this.clean({ 'gen_ai.request.model': event.model, 'durable_agent.max_turns': event.maxTurns, 'durable_agent.store': event.location }));
        const { lastSave } = event;
        this.sessionEvent('durable_agent.resume', {
          'durable_agent.resume.state': event.state,
          'durable_agent.resume.turn': event.turn,
          'durable_agent.resume.pending_calls': event.pending.map((call) => call.id),
          'durable_agent.resume.ledger_entries': event.ledgerEntries,
          'durable_agent.resume.from_seq': lastSave.seq,
          'durable_agent.resume.from_point': lastSave.point,
          'durable_agent.resume.last_save_at': new Date(lastSave.at).toISOString(),
          'durable_agent.resume.gap_ms': Math.max(0, Date.now() - lastSave.at),
          ...(event.tornTail
            ? {
                'durable_agent.resume.cut_bytes': event.tornTail.bytes,
                ...(event.tornTail.lostCommittedRecord !== null ? { 'durable_agent.resume.lost_record': event.tornTail.lostCommittedRecord } : {}),
              }
            : {}),
          ...(event.acceptedChanges.length ? { 'durable_agent.resume.accepted_changes': event.acceptedChanges } : {}),
        });
        return;
      }
      case 'reopened':
        this.sessionEvent('durable_agent.reopened', { 'durable_agent.reopened.previous_state': event.previousState, 'durable_agent.max_turns': event.maxTurns });
        return;
      case 'lock-taken-over':
        this.sessionEvent('durable_agent.lock.taken_over', {
          'durable_agent.lock.previous_holder': event.holder,
          'durable_agent.lock.why': event.why,
          'durable_agent.lock.waited_ms': event.waitedMs,
        });
        return;
      case 'reconciled':
        this.reconciled(event.call, event.decision, event.detail);
        return;
      case 'saved':
        this.child(
          `save ${event.point}`,
          SpanKind.INTERNAL,
          {
            'durable_agent.save.seq': event.seq,
            'durable_agent.save.point': event.point,
            'durable_agent.save.label': event.label,
            'durable_agent.save.event': event.event,
            'durable_agent.save.state': event.state,
            'durable_agent.save.bytes': event.bytes,
            'durable_agent.save.durable': event.durable,
            'durable_agent.turn': event.turn,
            'durable_agent.ledger_entries': event.ledgerEntries,
            ...(event.syncMs !== null ? { 'durable_agent.save.fsync_ms': round(event.syncMs) } : {}),
            ...(event.closesResumedTurn ? { 'durable_agent.save.closes_resumed_turn': true } : {}),
          },
          event.at,
        ).end();
        return;
      case 'model-call':
        this.modelSpan?.end();
        this.modelSpan = this.child(`chat ${event.model}`, SpanKind.CLIENT, {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': event.model,
          'gen_ai.request.max_tokens': event.maxTokens,
          ...(event.provider ? { 'gen_ai.provider.name': event.provider } : {}),
          'durable_agent.turn': event.turn,
          ...(this.contentExported
            ? {
                'gen_ai.input.messages': this.content(JSON.stringify(event.messages)),
                ...(event.system ? { 'gen_ai.system_instructions': this.content(JSON.stringify([{ type: 'text', content: event.system }])) } : {}),
              }
            : {}),
        });
        return;
      case 'model-reply': {
        const span = this.modelSpan;
        if (!span) return;
        this.modelSpan = null;
        span.setAttributes(
          this.clean({
            ...(event.stopReason !== null ? { 'gen_ai.response.finish_reasons': [event.stopReason] } : {}),
            ...(event.reply.model ? { 'gen_ai.response.model': event.reply.model } : {}),
            ...usageAttributes(event.usage),
            ...(event.usageNote ? { 'durable_agent.usage_note': event.usageNote } : {}),
            ...(this.contentExported
              ? { 'gen_ai.output.messages': this.content(JSON.stringify([{ role: 'assistant', content: event.reply.content, finish_reason: event.stopReason }])) }
              : {}),
          }),
        );
        span.end();
        return;
      }
      case 'tool-started': {
        const settled = this.decisions.get(event.call.id);
        this.toolSpans.get(event.call.id)?.end();
        this.toolSpans.set(
          event.call.id,
          this.child(
            `execute_tool ${event.call.name}`,
            SpanKind.INTERNAL,
            {
              ...this.toolAttributes(event.call),
              'durable_agent.tool.executed': true,
              ...(settled ? { 'durable_agent.reconcile.decision': settled.decision } : {}),
            },
            event.at,
          ),
        );
        return;
      }
      case 'tool-finished': {
        const span = this.toolSpans.get(event.call.id);
        if (!span) return;
        this.toolSpans.delete(event.call.id);
        span.setAttributes(
          this.clean({
            'durable_agent.tool.outcome': event.outcome.kind,
            'durable_agent.tool.is_error': event.outcome.is_error,
            ...(this.contentExported ? { 'gen_ai.tool.call.result': this.content(contentText(event.outcome.content)) } : {}),
          }),
        );
        if (event.outcome.is_error) {
          span.setAttribute('error.type', event.outcome.kind);
          span.setStatus({ code: SpanStatusCode.ERROR, message: `the tool returned an error (${event.outcome.kind})` });
        }
        span.end();
        return;
      }
      case 'child-queueing':
        // The call's span while its child is queued: the child's trace hangs under it. The call is not run.
        this.toolSpans.get(event.call.id)?.end();
        this.toolSpans.set(event.call.id, this.child(`execute_tool ${event.call.name}`, SpanKind.INTERNAL, { ...this.toolAttributes(event.call), 'durable_agent.tool.executed': false, 'durable_agent.tool.awaits': 'child' }, event.at));
        return;
      case 'child-queued': {
        const span = this.toolSpans.get(event.call.id);
        if (!span) return;
        this.toolSpans.delete(event.call.id);
        span.setAttribute('durable_agent.child.run_id', event.childRunId);
        span.end(event.at);
        return;
      }
      case 'ledger-write-failed':
        this.sessionEvent('durable_agent.ledger_write_failed', {
          'gen_ai.tool.call.id': event.call.id,
          'gen_ai.tool.name': event.call.name,
          'exception.message': event.error.message,
        });
        return;
      case 'finished': {
        const { result } = event;
        this.session?.setAttributes(
          this.clean({
            'durable_agent.status': result.status,
            'durable_agent.turn': result.turn,
            ...usageAttributes(result.usage, 'durable_agent.run.usage'),
            ...(result.failure ? { 'durable_agent.failure.reason': result.failure.reason } : {}),
          }),
        );
        if (result.status === 'failed') {
          this.session?.setStatus({ code: SpanStatusCode.ERROR, message: redactSecrets(result.failure?.message ?? 'the run failed') });
        }
        return;
      }
    }
  }

  /** A resume settled an open call: its tool span carries the decision (and says whether it ran). */
  private reconciled(call: CallView, decision: ReconcileOutcomeName, detail: string | null): void {
    this.decisions.set(call.id, { decision, detail });
    if (!SETTLED_WITHOUT_RUNNING.includes(decision)) return;
    this.child(`execute_tool ${call.name}`, SpanKind.INTERNAL, {
      ...this.toolAttributes(call),
      'durable_agent.tool.executed': false,
      'durable_agent.reconcile.decision': decision,
      ...(detail ? { 'durable_agent.reconcile.detail': detail } : {}),
    }).end();
  }

  private toolAttributes(call: CallView): Attributes {
    return {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.id,
      'gen_ai.tool.type': 'function',
      'durable_agent.tool.effect': call.readOnly === null ? 'unknown' : call.readOnly ? 'read-only' : 'side-effect',
      ...(call.readOnly !== null ? { 'durable_agent.tool.read_only': call.readOnly } : {}),
      ...(this.contentExported ? { 'gen_ai.tool.call.arguments': this.content(JSON.stringify(call.input ?? null)) } : {}),
    };
  }

  private content(text: string): string {
    return text.length > MAX_CONTENT_CHARS ? `${text.slice(0, MAX_CONTENT_CHARS)}…[${text.length - MAX_CONTENT_CHARS} more characters]` : text;
  }

  /** Every text leaving in a span goes through redactSecrets: no API key is ever exported. */
  private clean(attributes: Attributes): Attributes {
    const out: Attributes = {};
    for (const [key, value] of Object.entries(attributes)) out[key] = cleanValue(value);
    return out;
  }
}

function cleanValue(value: AttributeValue | undefined): AttributeValue | undefined {
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? redactSecrets(item) : item)) as AttributeValue;
  return value;
}

/**
 * GenAI token attributes. Anthropic's input_tokens leaves cached tokens out; the convention's
 * input_tokens counts every input token, so cache reads and writes are added in (and also given
 * on their own).
 */
function usageAttributes(usage: TokenUsage, prefix = 'gen_ai.usage'): Attributes {
  return {
    [`${prefix}.input_tokens`]: usage.input + usage.cacheRead + usage.cacheWrite,
    [`${prefix}.output_tokens`]: usage.output,
    [`${prefix}.cache_read.input_tokens`]: usage.cacheRead,
    [`${prefix}.cache_creation.input_tokens`]: usage.cacheWrite,
  };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  // An image's or a document's base64 says nothing in a trace: its media type and size do.
  return JSON.stringify(Array.isArray(content) ? mapPayloadBlocks(content, withoutPayloadBytes) : content);
}

function endSpan(span: Span, attributes: Attributes, message: string): void {
  span.setAttributes(attributes);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.end();
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** The header's trace context as a remote span context, or null when absent or malformed (never a reason to refuse a run). */
export function spanContextOf(stored: RunTraceContext | undefined): SpanContext | null {
  if (!stored || typeof stored !== 'object') return null;
  const { traceId, spanId, traceFlags } = stored;
  if (typeof traceId !== 'string' || typeof spanId !== 'string') return null;
  const candidate: SpanContext = { traceId, spanId, traceFlags: Number.isInteger(traceFlags) ? traceFlags & 0xff : 1, isRemote: true };
  return trace.isSpanContextValid(candidate) ? candidate : null;
}
