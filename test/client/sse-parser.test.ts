/**
 * The client's Server-Sent Events parser, held to the WHATWG standard's event stream
 * interpretation: chunks cut anywhere (inside a line, between a CR and its LF), the three line
 * ends, data over several lines, comments, the id kept by events that carry none, retry.
 */
import { describe, expect, it } from 'vitest';
import { type SseMessage, SseParser } from '../../src/client/sse-parser.ts';

/** Every message of a stream fed in the given chunks. */
function parse(...chunks: string[]): SseMessage[] {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

const message = (data: string, lastEventId = '', event = 'message', hasId = lastEventId !== '') => ({ event, data, lastEventId, hasId });

describe('SseParser', () => {
  it('reads an event with its id, name and data', () => {
    expect(parse('id: 7\nevent: state\ndata: {"a":1}\n\n')).toEqual([message('{"a":1}', '7', 'state')]);
  });

  it('gives the same events however the stream is cut, one character at a time included', () => {
    const stream = 'id: 1\ndata: first\n\n: a comment\ndata: second\r\ndata: line two\r\n\r\nid: 2\rdata: third\r\r';
    const whole = parse(stream);
    expect(whole).toEqual([message('first', '1'), message('second\nline two', '1', 'message', false), message('third', '2')]);
    expect(parse(...stream.split(''))).toEqual(whole);
    for (let cut = 1; cut < stream.length; cut += 1) expect(parse(stream.slice(0, cut), stream.slice(cut)), `cut at ${cut}`).toEqual(whole);
  });

  it('takes a CR at the end of a chunk and the LF that opens the next as one line end', () => {
    expect(parse('data: a\r', '\n', '\r', '\ndata: b\r\n\r\n')).toEqual([message('a'), message('b')]);
  });

  it('joins data lines with a line feed, keeps a blank data line, and removes one space after the colon only', () => {
    expect(parse('data:  two spaces\ndata\ndata:x\n\n')).toEqual([message(' two spaces\n\nx')]);
  });

  it('ignores comments, unknown fields and a lone byte order mark at the start', () => {
    expect(parse('\uFEFF: keep-alive\n\n', 'foo: bar\n:another\ndata: ok\n\n')).toEqual([message('ok')]);
  });

  it('dispatches nothing for an event without data, yet its id becomes the last id', () => {
    const parser = new SseParser();
    expect(parser.push('id: 5\n\n')).toEqual([]);
    expect(parser.lastEventId).toBe('5');
    expect(parser.push('data: x\n\n')).toEqual([message('x', '5', 'message', false)]);
  });

  it('an event without an id keeps the last id; an empty id clears it; an id with NUL is ignored', () => {
    expect(parse('id: 3\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 4\0\ndata: d\n\n')).toEqual([
      message('a', '3'),
      message('b', '3', 'message', false),
      { event: 'message', data: 'c', lastEventId: '', hasId: true },
      message('d', '', 'message', false),
    ]);
  });

  it('reads retry when it is digits only', () => {
    const parser = new SseParser();
    parser.push('retry: 2500\n\n');
    expect(parser.retry).toBe(2500);
    parser.push('retry: 3s\n\nretry: -1\n\n');
    expect(parser.retry).toBe(2500);
  });

  it('drops an event the stream ended in the middle of, and the id it was setting', () => {
    const parser = new SseParser();
    expect(parser.push('id: 1\ndata: whole\n\nid: 2\ndata: cut')).toEqual([message('whole', '1')]);
    parser.end();
    expect(parser.lastEventId).toBe('1');
  });
});
