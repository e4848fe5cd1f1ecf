/** @jsxRuntime automatic @jsxImportSource react */
/** A labelled row of the live view: a fixed label column, the value wrapping beside it. */
import { Box, Text } from 'ink';
import type { ReactNode } from 'react';

export const LABEL_WIDTH = 9;

export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Box>
      <Box width={LABEL_WIDTH} flexShrink={0}>
        <Text dimColor>{label}</Text>
      </Box>
      <Box flexGrow={1} flexShrink={1} flexDirection="column">
        {children}
      </Box>
    </Box>
  );
}
