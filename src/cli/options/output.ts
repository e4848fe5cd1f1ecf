/** How a command prints: the live view or plain lines, more detail, JSON. */
import { option } from './option.ts';

export const plain = option({ key: 'plain', type: 'boolean', help: 'print the plain lines, never the live view' });
export const verbose = option({ key: 'verbose', type: 'boolean', help: 'also print every save, model call and tool call (to stderr), and stack traces' });
export const json = option({ key: 'json', type: 'boolean', help: 'print JSON instead of a table' });

export const outputOptions = [plain, verbose] as const;
