/**
 * A reply's thinking and server tool blocks in words: each kind of result the API's types name
 * (the SDK's *_tool_result blocks, errors included), and no encrypted field said as text.
 */
import { describe, expect, it } from 'vitest';
import type { ContentBlock } from '../../machines/agent-loop.types.ts';
import { replyBlockLines, sealedWords, serverToolResultWords, serverToolUseWords, thinkingWords, withoutSealed } from '../../src/words/block-words.ts';

const result = (type: string, content: unknown): ContentBlock => ({ type, tool_use_id: 'srvtoolu_1', content });

describe('thinking', () => {
  it('is its length and first words, cut; a redacted block is only named', () => {
    const long = `Let me think.\n\n${'step by step '.repeat(20)}`;
    expect(thinkingWords({ type: 'thinking', thinking: long, signature: 'c2ln' })).toBe(`thinking (${long.length} characters): Let me think. step by step step by step step by step step b…`);
    expect(thinkingWords({ type: 'thinking', thinking: '', signature: 'c2ln' })).toBe('thinking (0 characters)');
    expect(thinkingWords({ type: 'redacted_thinking', data: 'ZW5jcnlwdGVk' })).toBe('redacted thinking');
    expect(sealedWords({ type: 'redacted_thinking', data: 'ZW5jcnlwdGVk' })).toBe('data: 12 characters, encrypted, not shown');
    expect(sealedWords({ type: 'thinking', thinking: 'x', signature: 'c2ln' })).toBe('signature: 4 characters, not shown');
  });
});

describe('server tool calls', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['web_search', { query: 'durable agents' }, 'web_search "durable agents"'],
    ['web_fetch', { url: 'https://example.com/a' }, 'web_fetch https://example.com/a'],
    ['code_execution', { code: 'import os\nprint(os.listdir())' }, 'code_execution import os print(os.listdir())'],
    ['bash_code_execution', { command: 'ls -la' }, 'bash_code_execution ls -la'],
    ['text_editor_code_execution', { command: 'view', path: '/tmp/a.txt' }, 'text_editor_code_execution view /tmp/a.txt'],
    ['a_new_tool', { x: 1 }, 'a_new_tool {"x":1}'],
  ])('%s names what it asks', (name, input, words) => {
    expect(serverToolUseWords({ type: 'server_tool_use', id: 'srvtoolu_1', name, input })).toBe(words);
  });

  it.each<[string, ContentBlock, string]>([
    ['search results', result('web_search_tool_result', [{ type: 'web_search_result', url: 'u', title: 't', encrypted_content: 'ZW5j' }]), '1 result'],
    ['no search result', result('web_search_tool_result', []), 'no results'],
    ['a search error', result('web_search_tool_result', { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' }), 'error: max_uses_exceeded'],
    ['a fetch', result('web_fetch_tool_result', { type: 'web_fetch_result', url: 'https://example.com/a', content: { type: 'document' } }), 'fetched https://example.com/a'],
    ['a fetch error', result('web_fetch_tool_result', { type: 'web_fetch_tool_result_error', error_code: 'url_not_accessible' }), 'error: url_not_accessible'],
    ['code with plain output', result('code_execution_tool_result', { type: 'code_execution_result', stdout: '45\n', stderr: '', return_code: 0, content: [] }), 'exit 0, output: 45'],
    ['code with encrypted output and a file', result('code_execution_tool_result', { type: 'encrypted_code_execution_result', encrypted_stdout: 'ZW5j', stderr: '', return_code: 0, content: [{ type: 'code_execution_output', file_id: 'f' }] }), 'exit 0, output encrypted, 1 file'],
    ['bash that failed', result('bash_code_execution_tool_result', { type: 'bash_code_execution_result', stdout: '', stderr: 'ls: no such file\n', return_code: 2, content: [] }), 'exit 2, stderr: ls: no such file'],
    ['a bash error', result('bash_code_execution_tool_result', { type: 'bash_code_execution_tool_result_error', error_code: 'execution_time_exceeded' }), 'error: execution_time_exceeded'],
    ['a view', result('text_editor_code_execution_tool_result', { type: 'text_editor_code_execution_view_result', content: 'a\nb', file_type: 'text', num_lines: 2 }), 'viewed 2 lines'],
    ['an update', result('text_editor_code_execution_tool_result', { type: 'text_editor_code_execution_create_result', is_file_update: true }), 'file updated'],
    ['a replace', result('text_editor_code_execution_tool_result', { type: 'text_editor_code_execution_str_replace_result', lines: ['x'] }), 'text replaced'],
    ['an editor error with its message', result('text_editor_code_execution_tool_result', { type: 'text_editor_code_execution_tool_result_error', error_code: 'file_not_found', error_message: 'no /tmp/a.txt' }), 'error: file_not_found (no /tmp/a.txt)'],
  ])('%s: its kind', (_, block, words) => {
    expect(serverToolResultWords(block)).toBe(words);
  });

  it('a reply: a call and its result on one line, an error among them, in the order they came', () => {
    const content: ContentBlock[] = [
      { type: 'redacted_thinking', data: 'ZW5jcnlwdGVk' },
      { type: 'text', text: 'Searching.' },
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
      result('web_search_tool_result', { type: 'web_search_tool_result_error', error_code: 'too_many_requests' }),
    ];
    expect(replyBlockLines(content)).toEqual(['[thinking] redacted thinking', '[server tool] web_search srvtoolu_1 "q" → error: too_many_requests']);
  });

  it('without its sealed fields, a block keeps every other field and names each sealed one by its size', () => {
    const block = result('web_search_tool_result', [{ type: 'web_search_result', url: 'https://a', title: 'A', encrypted_content: 'ZW5jcnlwdGVk', page_age: null }]);
    expect(withoutSealed(block)).toEqual(result('web_search_tool_result', [{ type: 'web_search_result', url: 'https://a', title: 'A', encrypted_content: '[encrypted, 12 characters]', page_age: null }]));
    expect(withoutSealed({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } })).toEqual({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: '[base64, 8 characters]' } });
  });
});
