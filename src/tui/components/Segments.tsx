/** @jsxRuntime automatic @jsxImportSource react */
/**
 * Parts of one line joined by " · ". On a narrow terminal the line breaks between parts, never
 * inside one that fits, and no continuation line starts with a stray space or separator.
 */
import { Box, Text } from 'ink';
import type { ReactNode } from 'react';

export function Segments({ parts }: { parts: ReadonlyArray<ReactNode | null> }) {
  const shown = parts.filter((part) => part !== null && part !== false);
  // The separator ends its part and the gap is the layout's, so a line never starts or ends with a stray space.
  return (
    <Box flexWrap="wrap" columnGap={1}>
      {shown.map((part, index) => (
        <Box key={index}>
          <Text>
            {part}
            {index < shown.length - 1 ? <Text dimColor> ·</Text> : null}
          </Text>
        </Box>
      ))}
    </Box>
  );
}
