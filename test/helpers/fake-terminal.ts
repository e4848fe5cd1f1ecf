/** A terminal for ink to draw on in-process: it keeps what was written, escape sequences and all. */
import { EventEmitter } from 'node:events';

export class FakeTerminal extends EventEmitter {
  isTTY = true;
  columns = 100;
  rows = 40;
  written = '';
  write = (chunk: string, callback?: () => void) => {
    this.written += chunk;
    callback?.();
    return true;
  };
  /** The text without escape sequences. */
  get text(): string {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: it strips terminal escape sequences, which start with ESC
    return this.written.replace(/\u001B\[[0-9;?]*[A-Za-z]/g, '');
  }
}
