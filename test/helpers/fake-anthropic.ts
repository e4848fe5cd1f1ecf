/**
 * A fake Anthropic Messages API on 127.0.0.1, for the real SDK to talk real HTTP to. Each test
 * scripts the answers (a reply, an error status with headers, a dropped connection, no answer
 * at all) and afterwards reads every request the server received.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ContentBlock, Message, ModelReply } from '../../machines/agent-loop.types.ts';

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
  };
  at: number;
}

export type FakeAnswer =
  | { reply: ModelReply; headers?: Record<string, string> }
  /** A message body exactly as given, for replies no real API sends (a null block, no usage). */
  | { body: Record<string, unknown> }
  | { status: number; errorType: string; message: string; headers?: Record<string, string> }
  | { drop: true }
  | { hang: true };

export type Responder = (request: ReceivedRequest) => FakeAnswer;

export class FakeAnthropic {
  readonly requests: ReceivedRequest[] = [];
  private server: http.Server | null = null;
  private readonly sockets = new Set<import('node:net').Socket>();

  constructor(private responder: Responder) {}

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

  /** Requests that were answered with a message (not an error, drop or hang). */
  get answered(): ReceivedRequest[] {
    return this.requests.filter((r) => this.outcomes.get(r.index) === 'reply');
  }

  private readonly outcomes = new Map<number, string>();

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        index: this.requests.length,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(raw || '{}'),
        at: Date.now(),
      };
      this.requests.push(request);
      const answer = this.responder(request);
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
      this.outcomes.set(request.index, 'reply');
      if ('body' in answer) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', ...answer.headers });
      res.end(JSON.stringify(messageBody(answer.reply, request.body.model, request.index)));
    });
  }
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
    },
  };
}

/** How many replies the conversation in a request already holds: which step of a script comes next. */
export function assistantTurns(request: ReceivedRequest): number {
  return request.body.messages.filter((m) => m.role === 'assistant').length;
}
