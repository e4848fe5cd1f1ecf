/** @jsxRuntime automatic @jsxImportSource react */
/** The turn's tool calls: a spinner while one runs, read-only or side effect, where it stands. */
import { Text } from 'ink';
import { callStatusText, spinnerFrame, toolKind } from '../format.ts';
import type { CallLine } from '../run-view.ts';
import { Segments } from './Segments.tsx';

export function CallList({ calls, now }: { calls: readonly CallLine[]; now: number }) {
  if (calls.length === 0) return <Text dimColor>none</Text>;
  return (
    <>
      {calls.map((call) => (
        <Segments
          key={call.id}
          parts={[
            <>
              <CallIcon call={call} now={now} /> <Text bold>{call.name}</Text> <Text dimColor>{call.id}</Text>
            </>,
            <Text color={call.readOnly === null ? 'red' : call.readOnly ? 'green' : 'yellow'}>{toolKind(call.readOnly)}</Text>,
            callStatusText(call, now),
          ]}
        />
      ))}
    </>
  );
}

function CallIcon({ call, now }: { call: CallLine; now: number }) {
  switch (call.status) {
    case 'waiting':
      return <Text dimColor>·</Text>;
    case 'running':
      return <Text color="cyan">{spinnerFrame(now - (call.startedAt ?? now))}</Text>;
    case 'returned':
      return <Text color="cyan">…</Text>;
    case 'recorded':
      return <Text color="green">✔</Text>;
    case 'unrecorded':
      return <Text color="red">⚠</Text>;
    case 'cut-off':
      return <Text color="red">✖</Text>;
  }
}
