/** @jsxRuntime automatic @jsxImportSource react */
/** On resume: where the run stood and how each dangling call was settled, in a box that stands out. */
import { Box, Text } from 'ink';
import { RECONCILE_LABELS, type Tone } from '../format.ts';
import type { RunView } from '../run-view.ts';
import { Segments } from './Segments.tsx';

const TONE_ICON: Record<Tone, { icon: string; color: string }> = {
  good: { icon: '✔', color: 'green' },
  redo: { icon: '↻', color: 'cyan' },
  warn: { icon: '⚠', color: 'yellow' },
};

export function ReconcilePanel({ view }: { view: RunView }) {
  const at = view.resumedAt;
  if (!at) return null;
  const pending = at.pending.length ? `dangling: ${at.pending.join(', ')}` : 'no dangling call';
  return (
    <Box borderStyle="round" borderColor="magenta" flexDirection="column" paddingX={1}>
      <Segments
        parts={[
          <>
            <Text bold color="magenta">
              resumed
            </Text>{' '}
            at turn {at.turn} ({at.state})
          </>,
          pending,
        ]}
      />
      {view.reconciled.map((line) => {
        const label = RECONCILE_LABELS[line.decision];
        const { icon, color } = TONE_ICON[label.tone];
        return (
          <Box key={line.id} flexDirection="column">
            <Segments
              parts={[
                <>
                  <Text color={color}>{icon}</Text> <Text bold>{line.name}</Text> <Text dimColor>{line.id}</Text>
                </>,
                <Text color={color}>{label.text}</Text>,
              ]}
            />
            {line.detail ? <Text dimColor>  {line.detail}</Text> : null}
          </Box>
        );
      })}
    </Box>
  );
}
