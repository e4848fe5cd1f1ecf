/**
 * Server-Sent Events, parsed from the text of a response body as the WHATWG HTML standard's
 * "event stream interpretation" says. Written here rather than using EventSource because
 * EventSource cannot send an Authorization header; fetch can, and hands over the body in chunks
 * cut anywhere, so this parser keeps the partial line between pushes.
 */

/** One dispatched event. */
export interface SseMessage {
  /** The `event:` field; 'message' when the event named none. */
  event: string;
  /** The `data:` lines joined with a line feed. */
  data: string;
  /** The last event id at dispatch: this event's `id:`, else the one before it (the standard keeps it). */
  lastEventId: string;
  /** Whether this event itself carried an `id:` field. */
  hasId: boolean;
}

export class SseParser {
  #partial = '';
  // A chunk may end between the CR and the LF of one CRLF: the LF that opens the next one is not a second line end.
  #skipLeadingLf = false;
  #atStart = true;
  #data = '';
  #hasData = false;
  #event = '';
  #idSeen = false;
  // The standard's "last event ID buffer": set by a field, made the stream's last id when an event ends.
  #idBuffer = '';
  #lastEventId = '';
  #retry: number | null = null;

  /** The reconnection time (ms) the last `retry:` field set; null when none did. */
  get retry(): number | null {
    return this.#retry;
  }

  get lastEventId(): string {
    return this.#lastEventId;
  }

  /** Feeds decoded text; returns the events it completed, in order. */
  push(text: string): SseMessage[] {
    let chunk = text;
    if (this.#skipLeadingLf && chunk.startsWith('\n')) chunk = chunk.slice(1);
    if (chunk.length > 0) this.#skipLeadingLf = false;
    if (this.#atStart && chunk.length > 0) {
      // One byte order mark at the start of the stream is not part of the first field.
      if (chunk.startsWith('\uFEFF')) chunk = chunk.slice(1);
      this.#atStart = false;
    }
    const messages: SseMessage[] = [];
    const buffer = this.#partial + chunk;
    let start = 0;
    // The kept partial line holds no line end: scanning resumes after it.
    for (let i = this.#partial.length; i < buffer.length; i += 1) {
      const c = buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.#line(buffer.slice(start, i), messages);
      if (c === 13) {
        if (i + 1 < buffer.length) {
          if (buffer.charCodeAt(i + 1) === 10) i += 1;
        } else {
          this.#skipLeadingLf = true;
        }
      }
      start = i + 1;
    }
    this.#partial = buffer.slice(start);
    return messages;
  }

  /** The stream ended: an event not closed by a blank line is dropped, as the standard says. */
  end(): void {
    this.#partial = '';
    this.#skipLeadingLf = false;
    this.#idBuffer = this.#lastEventId;
    this.#resetEvent();
  }

  #line(line: string, out: SseMessage[]): void {
    if (line === '') {
      this.#dispatch(out);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.#event = value;
        break;
      case 'data':
        this.#data += `${value}\n`;
        this.#hasData = true;
        break;
      case 'id':
        if (!value.includes('\0')) {
          this.#idBuffer = value;
          this.#idSeen = true;
        }
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.#retry = Number(value);
        break;
      default:
        break;
    }
  }

  #dispatch(out: SseMessage[]): void {
    this.#lastEventId = this.#idBuffer;
    if (this.#hasData) {
      out.push({ event: this.#event || 'message', data: this.#data.slice(0, -1), lastEventId: this.#lastEventId, hasId: this.#idSeen });
    }
    this.#resetEvent();
  }

  #resetEvent(): void {
    this.#data = '';
    this.#hasData = false;
    this.#event = '';
    this.#idSeen = false;
  }
}
