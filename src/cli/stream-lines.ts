/**
 * The plain log's view of a streamed reply (--verbose, on stderr): each line of the reply's text
 * as soon as it is complete, each tool call (a server tool's too) as soon as the model names it. Lines, not pieces:
 * the plain log is read line by line (a pipe, a file, CI), and a partial line would be torn.
 */
import type { RunEvent } from '../core/run-events.ts';

export function streamLineWriter(write: (line: string) => void): (event: RunEvent) => void {
  let pending = '';
  const flush = () => {
    if (pending.trim() !== '') write(`[model] ${pending}`);
    pending = '';
  };
  return (event) => {
    if (event.type === 'model-reply' || event.type === 'finished') return flush();
    if (event.type !== 'model-stream') return;
    const { delta } = event;
    switch (delta.type) {
      case 'text': {
        const lines = (pending + delta.text).split('\n');
        pending = lines.pop()!;
        for (const line of lines) if (line.trim() !== '') write(`[model] ${line}`);
        return;
      }
      case 'tool-use':
        flush();
        write(`[model] calls ${delta.name} ${delta.id}`);
        return;
      case 'server-tool-use':
        flush();
        write(`[model] calls the server tool ${delta.name} ${delta.id}`);
        return;
      // Thinking is said once its block is whole (the [thinking] line): a line of its pieces would be torn.
      case 'thinking':
      case 'redacted-thinking':
      case 'tool-input':
        return;
      case 'restart':
        pending = '';
        write(`[model] the reply's stream broke off (${delta.reason}); asking again (retry ${delta.attempt}), the lines above are void`);
        return;
    }
  };
}
