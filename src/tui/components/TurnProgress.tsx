/** @jsxRuntime automatic @jsxImportSource react */
/** Turn N of MAX_TURNS, with a bar. */
import { Text } from 'ink';
import { barWidth, progressBar } from '../format.ts';

export function TurnProgress({ turn, maxTurns, columns }: { turn: number; maxTurns: number; columns: number }) {
  return (
    <Text>
      <Text bold>{turn}</Text> of {maxTurns} <Text color="cyan">{progressBar(turn, maxTurns, barWidth(columns))}</Text>
    </Text>
  );
}
