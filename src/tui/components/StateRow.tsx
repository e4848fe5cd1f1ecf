/** @jsxRuntime automatic @jsxImportSource react */
/** The machine's states in a row, the current one marked; wraps on a narrow terminal. */
import { Box, Text } from 'ink';
import type { AgentStateName } from '../../../machines/agent-loop.types.ts';
import { LOOP_STATES, loopStatesShown } from '../format.ts';

/** `asked`: the run has waited for a person's decision, so the row shows awaitingDecision. */
export function StateRow({ state, asked = false }: { state: AgentStateName | null; asked?: boolean }) {
  const final = state !== null && !LOOP_STATES.some((step) => step.state === state) ? state : null;
  const steps = [...loopStatesShown(state, asked), ...(final ? [{ state: final, label: final }] : [])];
  return (
    <Box flexWrap="wrap" columnGap={1}>
      {steps.map((step, index) => (
        <Text key={step.state}>
          {step.state === state ? (
            <Text bold color={final ? finalColor(final) : 'cyan'}>
              ▶ {step.label}
            </Text>
          ) : (
            <Text dimColor>{step.label}</Text>
          )}
          {index < steps.length - 1 ? <Text dimColor> →</Text> : null}
        </Text>
      ))}
    </Box>
  );
}

function finalColor(state: AgentStateName): string {
  return state === 'done' ? 'green' : state === 'failed' ? 'red' : 'yellow';
}
