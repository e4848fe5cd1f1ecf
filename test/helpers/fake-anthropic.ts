/**
 * A fake Anthropic Messages API on 127.0.0.1, for the real SDK to talk real HTTP to. Each test
 * scripts the answers (a reply, an error status with headers, a dropped connection, no answer
 * at all) and afterwards reads every request the server received.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ContentBlock, Message, ModelReply } from '../../machines/agent-loop.types.ts';
import { FakeServerTools, type ServerToolRequest } from './fake-server-tools.ts';

export interface ReceivedRequest {
  index: number;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: {
    model: string;
    max_tokens: number;
    system?: string;
    tools?: Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
    messages: Message[];
    stream?: boolean;
    thinking?: { type: string; budget_tokens?: number };
    tool_choice?: { type: string; name?: string };
    temperature?: number;
    top_p?: number;
    top_k?: number;
    container?: unknown;
  };
  at: number;
}

export type FakeAnswer =
  /** Sent whole, or as a stream of events when the request asked for one (stream: true). */
  | { reply: ModelReply; headers?: Record<string, string> }
  /** A message body exactly as given, for replies no real API sends (a null block, no usage); never streamed. */
  | { body: Record<string, unknown> }
  | { status: number; errorType: string; message: string; headers?: Record<string, string> }
  | { drop: true }
  | { hang: true }
  /** The reply as a server-sent event stream (the request asked for stream: true). */
  | ({ stream: ModelReply; headers?: Record<string, string> } & StreamPacing);

/** How a streamed reply is sent, and how it may break off. */
export interface StreamPacing {
  /** Characters of text or of the input's JSON in one delta (default 12). */
  chunk?: number;
  /** Milliseconds between two events (default 0). */
  gapMs?: number;
  /** Before writing event N (0 = message_start), wait for this promise: the test looks at the screen meanwhile. */
  holdAt?: StreamHold | StreamHold[];
  /** Reset the connection instead of writing event N (a network drop mid-stream). */
  dropAt?: number;
  /** Write an `error` event (overloaded_error) instead of event N, and end the stream. */
  errorAt?: number;
  /** Told right after each event is written, with performance.now(). */
  onEvent?: (event: StreamEvent, at: number) => void;
}

/** Before writing event N, wait for the promise (several: a pause at each). */
export interface StreamHold {
  event: number;
  until: Promise<void>;
}

/** One server-sent event of a streamed reply, as the API sends it. */
export interface StreamEvent {
  type: string;
  [field: string]: unknown;
}

export type Responder = (request: ReceivedRequest) => FakeAnswer;

/**
 * What the fake emulates besides the script. Tokens are counted as the runtime estimates them
 * (JSON length / 4, src/compaction/estimate-tokens.ts), over what the API reads: the system
 * prompt, the tools, and the messages from the last compaction block on.
 */
export interface FakeOptions {
  /** Refuse a request over this many input tokens (400 "prompt is too long"), as the API does. */
  contextWindow?: number | undefined;
  /** Answer GET /v1/models/ID with this (absent: 404, as a gateway without the Models API). */
  modelInfo?: { max_input_tokens: number | null; compaction: boolean } | undefined;
  /** Answer this many GET /v1/models/ID with 529 overloaded before the model's entry (an outage that passes, or not). */
  modelLookupFailures?: number | undefined;
  /** A request with thinking on: its reply carries a redacted_thinking block too, after the thinking block. */
  redactedThinking?: boolean | undefined;
}

/** A compaction block the fake issued: sent back, it must equal this byte for byte. */
interface IssuedCompaction {
  json: string;
  /** Of the messages before it, how many the fake summarised (for the summary's text). */
  summarised: number;
}

export class FakeAnthropic {
  readonly requests: ReceivedRequest[] = [];
  /** GET /v1/models/ID requests (the model's traits): kept apart, the script never sees them. */
  readonly modelLookups: string[] = [];
  /** Compaction blocks issued, by signature; and how many came back verbatim. */
  private readonly issued = new Map<string, IssuedCompaction>();
  compactionsIssued = 0;
  compactionBlocksVerified = 0;
  /** Thinking and redacted_thinking blocks issued, by signature (or data): sent back, each must equal its JSON. */
  private readonly thoughts = new Map<string, string>();
  thinkingBlocksIssued = 0;
  /** Thinking blocks that came back byte for byte (counted once per request they were in). */
  thinkingBlocksVerified = 0;
  /** The input tokens of every message request, as counted (what the API reads, after clearing). */
  readonly inputTokens: number[] = [];
  /** Each clear_tool_uses_20250919 edit applied, as reported in the reply's applied_edits. */
  readonly clearings: AppliedClearing[] = [];
  /** Web search, web fetch and code execution, as the API runs them (fake-server-tools.ts). */
  readonly serverTools = new FakeServerTools();
  private server: http.Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();

  constructor(
    private responder: Responder,
    private readonly options: FakeOptions = {},
  ) {}

  /** Changes the script mid-test (e.g. the API comes back after an outage). */
  respondWith(responder: Responder): void {
    this.responder = responder;
  }

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private answerModelLookup(url: string, res: http.ServerResponse): void {
    const id = decodeURIComponent(url.slice('/v1/models/'.length).split('?')[0]!);
    this.modelLookups.push(id);
    if (this.modelLookups.length <= (this.options.modelLookupFailures ?? 0)) {
      res.writeHead(529, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
      return;
    }
    const info = this.options.modelInfo;
    if (!info) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `model: ${id}` } }));
      return;
    }
    const supported = (value: boolean) => ({ supported: value });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        type: 'model',
        id,
        display_name: id,
        created_at: '2026-01-01T00:00:00Z',
        max_input_tokens: info.max_input_tokens,
        max_tokens: 64_000,
        capabilities: {
          context_management: {
            supported: info.compaction,
            compact_20260112: supported(info.compaction),
            clear_tool_uses_20250919: supported(info.compaction),
            clear_thinking_20251015: supported(false),
          },
        },
      }),
    );
  }

  /**
   * The context window and server compaction, before the script answers: an error, a paused
   * compaction, or what the scripted reply gets (null: nothing to emulate).
   */
  private emulate(request: ReceivedRequest): Emulated | null {
    const body = request.body as ReceivedRequest['body'] & { context_management?: { edits?: Array<CompactEdit | ClearEdit> } };
    const edits = body.context_management?.edits ?? [];
    const edit = edits.find((e): e is CompactEdit => e.type === 'compact_20260112');
    const clear = edits.find((e): e is ClearEdit => e.type === 'clear_tool_uses_20250919');
    if (!this.options.contextWindow && !edit && !clear) return null;
    const betas = String(request.headers['anthropic-beta'] ?? '').split(',');
    if (edit && !betas.includes('compact-2026-01-12')) {
      return { status: 400, errorType: 'invalid_request_error', message: 'context_management.edits.0: compact_20260112 needs the beta header compact-2026-01-12' };
    }
    if (clear) {
      const problem = clearEditProblem(clear, betas);
      if (problem) return { status: 400, errorType: 'invalid_request_error', message: `context_management.edits: ${problem}` };
    }
    // Every compaction block sent back must be one this server issued, unchanged.
    let readFrom = 0;
    for (let m = 0; m < body.messages.length; m++) {
      const content = body.messages[m]!.content;
      if (typeof content === 'string') continue;
      for (const block of content) {
        if (block.type !== 'compaction') continue;
        const issued = this.issued.get(String(block.signature));
        const { cache_control: _cacheControl, ...sent } = block;
        if (!issued || JSON.stringify(sent) !== issued.json) {
          return { status: 400, errorType: 'invalid_request_error', message: 'compaction_content_mismatch: a compaction block was not sent back as it was returned' };
        }
        this.compactionBlocksVerified += 1;
        readFrom = m;
      }
    }
    const tokensOf = (messages: readonly Message[]) => fakeTokens(body.system ?? '') + fakeTokens(body.tools ?? []) + messages.reduce((n, message) => n + fakeTokens(message), 0);
    let read = body.messages.slice(readFrom);
    let inputTokens = tokensOf(read);
    // Clearing comes first (edits apply in order): compaction and the window see what it left.
    let applied: AppliedClearing[] | undefined = clear ? [] : undefined;
    if (clear && inputTokens >= (clear.trigger?.value ?? 100_000)) {
      const cleared = clearedToolUses(read, clear);
      const after = tokensOf(cleared.messages);
      if (cleared.count > 0 && inputTokens - after >= (clear.clear_at_least?.value ?? 0)) {
        const clearing = { type: 'clear_tool_uses_20250919' as const, cleared_tool_uses: cleared.count, cleared_input_tokens: inputTokens - after };
        this.clearings.push(clearing);
        applied = [clearing];
        read = cleared.messages;
        inputTokens = after;
      }
    }
    this.inputTokens.push(inputTokens);
    const trigger = edit ? (edit.trigger?.value ?? 150_000) : Number.POSITIVE_INFINITY;
    if (inputTokens >= trigger) {
      this.compactionsIssued += 1;
      const n = this.compactionsIssued;
      const block = {
        type: 'compaction',
        content: `Compaction ${n}: the conversation so far (${read.length} messages) was about the task; its tool results are summarised here.`,
        encrypted_content: Buffer.from(`opaque-${n}-${read.length}`).toString('base64'),
        signature: `sig_compaction_${n}`,
        // Every other block has a null field, which a client must send back as it is.
        tool_changes: n % 2 === 0 ? null : [],
      };
      this.issued.set(block.signature, { json: JSON.stringify(block), summarised: read.length });
      if (edit!.pause_after_compaction) {
        return { pausedReply: { content: [block], stop_reason: 'compaction', usage: { input: inputTokens, output: 200, cacheRead: 0, cacheWrite: 0 } }, applied };
      }
      return { block, inputTokens: fakeTokens(block) + fakeTokens(body.system ?? '') + fakeTokens(body.tools ?? []), applied };
    }
    if (this.options.contextWindow && inputTokens > this.options.contextWindow) {
      return { status: 400, errorType: 'invalid_request_error', message: `prompt is too long: ${inputTokens} tokens > ${this.options.contextWindow} maximum` };
    }
    return { block: null, inputTokens, applied };
  }

  /**
   * What the API refuses of a request's thinking, as it words it (null: nothing): a thinking or
   * redacted_thinking block that is not one it issued, byte for byte, or that carries a
   * cache_control; with thinking on, a tool loop whose assistant turn does not start with its
   * thinking; a budget out of range; a forced tool; sampling fields, which API version
   * 2026-10-21 no longer has.
   */
  private checkThinking(request: ReceivedRequest): Extract<Emulated, { status: number }> | null {
    const refuse = (message: string) => ({ status: 400, errorType: 'invalid_request_error', message });
    const { body } = request;
    const version = String(request.headers['anthropic-version'] ?? '');
    for (const field of ['temperature', 'top_p', 'top_k'] as const) {
      if (body[field] !== undefined && version !== '2023-06-01') return refuse(`${field}: Extra inputs are not permitted`);
    }
    let verified = 0;
    for (let m = 0; m < body.messages.length; m++) {
      const content = body.messages[m]!.content;
      if (typeof content === 'string') continue;
      for (let b = 0; b < content.length; b++) {
        const block = content[b]!;
        if (block.type !== 'thinking' && block.type !== 'redacted_thinking') continue;
        if (block.cache_control !== undefined) return refuse(`messages.${m}.content.${b}.${block.type}.cache_control: cache_control cannot be set for thinking blocks`);
        const issued = this.thoughts.get(String(block.type === 'thinking' ? block.signature : block.data));
        if (issued === undefined || JSON.stringify(block) !== issued) return refuse(`messages.${m}.content.${b}: Invalid \`signature\` in \`${block.type}\` block`);
        verified += 1;
      }
    }
    const thinking = body.thinking;
    if (thinking && thinking.type !== 'disabled') {
      if (thinking.type === 'enabled' && !(Number(thinking.budget_tokens) >= 1024)) return refuse('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
      if (thinking.type === 'enabled' && Number(thinking.budget_tokens) >= body.max_tokens) return refuse('`max_tokens` must be greater than `thinking.budget_tokens`');
      if (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool') return refuse('Thinking may not be enabled when tool_choice forces tool use.');
      // The older API version's sampling fields, as it takes them with thinking.
      if (body.temperature !== undefined && body.temperature !== 1) return refuse('`temperature` may only be set to 1 when thinking is enabled.');
      if (body.top_k !== undefined) return refuse('`top_k` is not supported when thinking is enabled.');
      if (body.top_p !== undefined && body.top_p < 0.95) return refuse('`top_p` must be greater than or equal to 0.95 when thinking is enabled.');
      const results = body.messages.at(-1);
      // Consecutive assistant messages are one turn to the API (a paused turn goes on in the next): the turn's first must start with thinking.
      let turnStart = body.messages.length - 2;
      while (turnStart > 0 && body.messages[turnStart - 1]?.role === 'assistant') turnStart -= 1;
      const reply = body.messages[turnStart];
      const inToolLoop = results?.role === 'user' && typeof results.content !== 'string' && results.content.some((b) => b.type === 'tool_result');
      if (inToolLoop && reply?.role === 'assistant') {
        const first = typeof reply.content === 'string' ? 'text' : reply.content[0]?.type;
        if (first !== 'thinking' && first !== 'redacted_thinking') {
          return refuse(
            `messages.${turnStart}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`,
          );
        }
      }
    }
    this.thinkingBlocksVerified += verified;
    return null;
  }

  /** With thinking on, a scripted reply starts with a thinking block the fake signs (and a redacted one, when asked). */
  private thoughtOf(request: ReceivedRequest, answer: FakeAnswer): FakeAnswer {
    const thinking = request.body.thinking;
    if (!thinking || thinking.type === 'disabled') return answer;
    const issue = (block: ContentBlock, key: string): ContentBlock => {
      this.thinkingBlocksIssued += 1;
      this.thoughts.set(key, JSON.stringify(block));
      return block;
    };
    const think = (reply: ModelReply): ModelReply => {
      const n = this.thinkingBlocksIssued + 1;
      const signature = Buffer.from(`fake-signature-${n}-${request.index}-${request.body.messages.length}`).toString('base64');
      const blocks = [issue({ type: 'thinking', thinking: `Thought ${n}: ${request.body.messages.length} messages so far; the next step follows.`, signature }, signature)];
      if (this.options.redactedThinking) {
        const data = Buffer.from(`fake-redacted-${n}-${request.index}`).toString('base64');
        blocks.push(issue({ type: 'redacted_thinking', data }, data));
      }
      return { ...reply, content: [...blocks, ...reply.content] };
    };
    if ('reply' in answer) return { ...answer, reply: think(answer.reply) };
    if ('stream' in answer) return { ...answer, stream: think(answer.stream) };
    return answer;
  }

  /** The script's server tool calls given their ids and results, its usage and container (fake-server-tools.ts). */
  private withServerTools(request: ReceivedRequest, answer: FakeAnswer): FakeAnswer {
    const emulate = (reply: ModelReply) => this.serverTools.reply(request as unknown as ServerToolRequest, reply);
    if ('reply' in answer) return { ...answer, reply: emulate(answer.reply) };
    if ('stream' in answer) return { ...answer, stream: emulate(answer.stream) };
    return answer;
  }

  /** Requests that were answered with a message (not an error, drop or hang). */
  get answered(): ReceivedRequest[] {
    return this.requests.filter((r) => this.outcomes.get(r.index) === 'reply');
  }

  private readonly outcomes = new Map<number, string>();

  private async sendStream(req: http.IncomingMessage, res: http.ServerResponse, request: ReceivedRequest, answer: Extract<FakeAnswer, { stream: ModelReply }>): Promise<void> {
    const events = streamEventsOf(answer.stream, request.body.model, request.index, answer.chunk);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...answer.headers });
    res.flushHeaders();
    for (let i = 0; i < events.length; i++) {
      if (i > 0 && answer.gapMs) await new Promise((resolve) => setTimeout(resolve, answer.gapMs));
      for (const hold of [answer.holdAt ?? []].flat()) if (hold.event === i) await hold.until;
      if (answer.dropAt === i) {
        this.outcomes.set(request.index, 'drop');
        // What was written reaches the client first: the stream breaks off after it has begun.
        await new Promise((resolve) => setTimeout(resolve, 25));
        req.socket.destroy();
        return;
      }
      if (answer.errorAt === i) {
        this.outcomes.set(request.index, 'error');
        res.end(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`);
        return;
      }
      const event = events[i]!;
      res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      answer.onEvent?.(event, performance.now());
    }
    this.outcomes.set(request.index, 'reply');
    res.end();
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      if (req.method === 'GET' && req.url?.startsWith('/v1/models/')) return this.answerModelLookup(req.url, res);
      const request: ReceivedRequest = {
        index: this.requests.length,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(raw || '{}'),
        at: Date.now(),
      };
      this.requests.push(request);
      const emulated = this.checkThinking(request) ?? this.serverTools.refusal(request as unknown as ServerToolRequest) ?? this.emulate(request);
      if (emulated && 'status' in emulated) {
        this.outcomes.set(request.index, 'error');
        res.writeHead(emulated.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: emulated.errorType, message: emulated.message } }));
        return;
      }
      if (emulated && 'pausedReply' in emulated) {
        this.outcomes.set(request.index, 'reply');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ...messageBody(emulated.pausedReply, request.body.model, request.index), ...contextManagementOf(emulated.applied) }));
        return;
      }
      const scripted = this.thoughtOf(request, this.withServerTools(request, this.responder(request)));
      const answer = emulated && 'reply' in scripted ? { ...scripted, reply: withEmulation(scripted.reply, emulated) } : scripted;
      if ('hang' in answer) {
        this.outcomes.set(request.index, 'hang');
        return;
      }
      if ('drop' in answer) {
        this.outcomes.set(request.index, 'drop');
        req.socket.destroy();
        return;
      }
      if ('status' in answer) {
        this.outcomes.set(request.index, 'error');
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(JSON.stringify({ type: 'error', error: { type: answer.errorType, message: answer.message } }));
        return;
      }
      if ('stream' in answer) {
        void this.sendStream(req, res, request, answer);
        return;
      }
      // A reply to a request that asked for a stream is streamed, as the API does.
      if ('reply' in answer && request.body.stream === true) {
        void this.sendStream(req, res, request, { stream: answer.reply, ...(answer.headers ? { headers: answer.headers } : {}) });
        return;
      }
      this.outcomes.set(request.index, 'reply');
      if ('body' in answer) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', ...answer.headers });
      const applied = emulated && 'applied' in emulated ? emulated.applied : undefined;
      res.end(JSON.stringify({ ...messageBody(answer.reply, request.body.model, request.index), ...contextManagementOf(applied) }));
    });
  }
}

/** The events of a streamed reply, as the API sends them (text and input JSON cut in chunks). */
export function streamEventsOf(reply: ModelReply, model: string, index: number, chunk = 12): StreamEvent[] {
  const body = messageBody(reply, model, index);
  const usage = body.usage as Record<string, number>;
  const events: StreamEvent[] = [{ type: 'message_start', message: { ...body, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }];
  const pieces = (text: string) => (text.length === 0 ? [] : Array.from({ length: Math.ceil(text.length / chunk) }, (_, i) => text.slice(i * chunk, (i + 1) * chunk)));
  (body.content as ContentBlock[]).forEach((block, i) => {
    if (block.type === 'text') {
      events.push({ type: 'content_block_start', index: i, content_block: { ...block, text: '' } });
      for (const text of pieces(block.text as string)) events.push({ type: 'content_block_delta', index: i, delta: { type: 'text_delta', text } });
    } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
      events.push({ type: 'content_block_start', index: i, content_block: { ...block, input: {} } });
      for (const partial_json of pieces(JSON.stringify(block.input))) events.push({ type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json } });
    } else if (block.type === 'thinking') {
      // As the API streams it: the text in pieces, the signature whole at the end.
      events.push({ type: 'content_block_start', index: i, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const thinking of pieces(block.thinking as string)) events.push({ type: 'content_block_delta', index: i, delta: { type: 'thinking_delta', thinking } });
      events.push({ type: 'content_block_delta', index: i, delta: { type: 'signature_delta', signature: block.signature } });
    } else {
      events.push({ type: 'content_block_start', index: i, content_block: block });
    }
    events.push({ type: 'content_block_stop', index: i });
  });
  events.push({ type: 'message_delta', delta: { stop_reason: body.stop_reason, stop_sequence: body.stop_sequence, container: body.container ?? null }, usage });
  events.push({ type: 'message_stop' });
  return events;
}

type Emulated =
  | { status: number; errorType: string; message: string }
  /** Compacted and paused (pause_after_compaction): the reply is the block alone. */
  | { pausedReply: ModelReply; applied: AppliedClearing[] | undefined }
  /** What the scripted reply gets: the block first (compacted, not paused), the input tokens counted. */
  | { block: ContentBlock | null; inputTokens: number; applied: AppliedClearing[] | undefined };

/** The reply's context_management, as the API adds it when the request asked for clearing. */
function contextManagementOf(applied: AppliedClearing[] | undefined): Record<string, unknown> {
  return applied ? { context_management: { applied_edits: applied } } : {};
}

function withEmulation(reply: ModelReply, emulated: Extract<Emulated, { inputTokens: number }>): ModelReply {
  return {
    ...reply,
    content: emulated.block ? [emulated.block, ...reply.content] : reply.content,
    usage: { ...reply.usage, input: emulated.inputTokens },
  };
}

interface CompactEdit {
  type: 'compact_20260112';
  trigger?: { type: 'input_tokens'; value: number } | null;
  pause_after_compaction?: boolean;
}

interface ClearEdit {
  type: 'clear_tool_uses_20250919';
  trigger?: { type: string; value: number };
  keep?: { type: string; value: number };
  clear_at_least?: { type: string; value: number } | null;
  exclude_tools?: string[] | null;
  clear_tool_inputs?: boolean | string[] | null;
}

export interface AppliedClearing {
  type: 'clear_tool_uses_20250919';
  cleared_tool_uses: number;
  cleared_input_tokens: number;
}

/** What the fake puts in place of a cleared tool result (the API's words differ; any text will do). */
export const CLEARED_RESULT = '[tool result cleared by context editing]';

function clearEditProblem(edit: ClearEdit, betas: readonly string[]): string | null {
  if (!betas.includes('context-management-2025-06-27')) return 'clear_tool_uses_20250919 needs the beta header context-management-2025-06-27';
  if (edit.trigger && edit.trigger.type !== 'input_tokens') return 'trigger.type must be input_tokens (this fake knows no other)';
  if (edit.keep && edit.keep.type !== 'tool_uses') return 'keep.type must be tool_uses';
  if (edit.clear_at_least && edit.clear_at_least.type !== 'input_tokens') return 'clear_at_least.type must be input_tokens';
  return null;
}

/**
 * Clears the oldest tool uses: every one but the last `keep` and the excluded tools, its result
 * replaced by a placeholder (and its input emptied with clear_tool_inputs). The messages are copies.
 */
function clearedToolUses(messages: readonly Message[], edit: ClearEdit): { messages: Message[]; count: number } {
  const excluded = new Set(edit.exclude_tools ?? []);
  const uses = messages.flatMap((m) => (m.role === 'assistant' && typeof m.content !== 'string' ? m.content.filter((b) => b.type === 'tool_use') : []));
  const clearable = uses.slice(0, Math.max(0, uses.length - (edit.keep?.value ?? 3))).filter((b) => !excluded.has(String(b.name)));
  const ids = new Set(clearable.map((b) => String(b.id)));
  const inputs = edit.clear_tool_inputs === true ? ids : new Set(clearable.filter((b) => Array.isArray(edit.clear_tool_inputs) && edit.clear_tool_inputs.includes(String(b.name))).map((b) => String(b.id)));
  let count = 0;
  const copied = messages.map((m): Message => {
    if (typeof m.content === 'string') return m;
    return {
      ...m,
      content: m.content.map((b) => {
        if (b.type === 'tool_result' && ids.has(String(b.tool_use_id)) && b.content !== CLEARED_RESULT) {
          count += 1;
          return { ...b, content: CLEARED_RESULT };
        }
        if (b.type === 'tool_use' && inputs.has(String(b.id))) return { ...b, input: {} };
        return b;
      }),
    };
  });
  return { messages: copied, count };
}

/** JSON length / 4, the runtime's own estimate. */
export function fakeTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value).length / 4);
}

/** A reply as the API sends it. */
export function messageBody(reply: ModelReply, model: string, index: number): Record<string, unknown> {
  return {
    id: `msg_fake_${index}`,
    type: 'message',
    role: 'assistant',
    model,
    content: reply.content.map((block: ContentBlock) => (block.type === 'text' ? { citations: null, ...block } : block)),
    stop_reason: reply.stop_reason,
    stop_sequence: reply.stop_reason === 'stop_sequence' ? '###' : null,
    usage: {
      input_tokens: reply.usage.input,
      output_tokens: reply.usage.output,
      cache_read_input_tokens: reply.usage.cacheRead,
      cache_creation_input_tokens: reply.usage.cacheWrite,
      ...(reply.usage.webSearchRequests !== undefined || reply.usage.webFetchRequests !== undefined
        ? { server_tool_use: { web_search_requests: reply.usage.webSearchRequests ?? 0, web_fetch_requests: reply.usage.webFetchRequests ?? 0 } }
        : {}),
    },
    ...(reply.container ? { container: { ...reply.container, skills: null } } : {}),
  };
}

/** How many replies the conversation in a request already holds: which step of a script comes next. */
export function assistantTurns(request: ReceivedRequest): number {
  return request.body.messages.filter((m) => m.role === 'assistant').length;
}
