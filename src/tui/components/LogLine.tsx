/** @jsxRuntime automatic @jsxImportSource react */
/** One permanent line above the live view: the plain line's exact text, its tag coloured. */
import { Text } from 'ink';
import type { LogEntry, LogTone } from '../run-view.ts';

const TONE_COLOR: Record<LogTone, string | undefined> = {
  'save-a': 'cyan',
  'save-b': 'green',
  resume: 'magenta',
  reconcile: 'magenta',
  done: 'green',
  stopped: 'yellow',
  failed: 'red',
  detail: undefined,
  alert: 'yellow',
  notice: 'red',
};

export function LogLine({ entry }: { entry: LogEntry }) {
  const color = TONE_COLOR[entry.tone];
  if (entry.tone === 'detail') return <Text dimColor>{entry.text}</Text>;
  const tag = /^(?:\[[^\]\n]*\])+/.exec(entry.text)?.[0] ?? '';
  return (
    <Text>
      <Text color={color} bold>
        {tag}
      </Text>
      {entry.text.slice(tag.length)}
    </Text>
  );
}
