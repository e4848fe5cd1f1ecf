/** @jsxRuntime automatic @jsxImportSource react */
/** The live area under the permanent log: redrawn in place while the run goes on. */
import { Box, Text } from 'ink';
import { activityText, endingText, replyLines, replyThinkingLine, runIdText, showsResumeHint, spinnerFrame } from '../format.ts';
import type { RunView } from '../run-view.ts';
import { CallList } from './CallList.tsx';
import { Field, LABEL_WIDTH } from './Field.tsx';
import { ReconcilePanel } from './ReconcilePanel.tsx';
import { Segments } from './Segments.tsx';
import { LastSaveLine, LedgerLine } from './SavedLines.tsx';
import { StateRow } from './StateRow.tsx';
import { TurnProgress } from './TurnProgress.tsx';
import { UsageLine } from './UsageLine.tsx';
import { budgetWords } from '../../budget/budget-words.ts';

export interface LiveViewProps {
  view: RunView;
  now: number;
  columns: number;
}

export function LiveView({ view, now, columns }: LiveViewProps) {
  return (
    <Box flexDirection="column" marginTop={1}>
      <Segments
        parts={[
          <Text bold color="cyan">
            durable-agent
          </Text>,
          view.model ? <Text dimColor>{view.model}</Text> : null,
          view.runId ? <Text dimColor>run {runIdText(view.runId)}</Text> : null,
        ]}
      />
      {view.task ? <Field label="task">{<Text>{view.task}</Text>}</Field> : null}
      <ReconcilePanel view={view} />
      <Field label="state">
        <StateRow state={view.state} asked={view.asked} />
      </Field>
      <Field label="turn">
        <TurnProgress turn={view.turn} maxTurns={view.maxTurns} columns={columns} />
      </Field>
      {view.reply ? (
        <Field label="reply">
          {view.reply.thinking.length > 0 ? <Text dimColor>{replyThinkingLine(view.reply)}</Text> : null}
          {replyLines(view.reply, Math.max(20, columns - LABEL_WIDTH - 1)).map((line, i) => (
            <Text key={i}>{line}</Text>
          ))}
        </Field>
      ) : null}
      <Field label="tools">
        <CallList calls={view.calls} now={now} />
      </Field>
      <Field label="tokens">
        <UsageLine usage={view.usage} model={view.model} costUsd={view.costUsd} />
      </Field>
      {view.budget && view.usage ? (
        <Field label="budget">
          <Text>{budgetWords(view.budget, view.usage, view.costUsd)}</Text>
        </Field>
      ) : null}
      <Field label="saved">
        <LastSaveLine view={view} now={now} />
      </Field>
      <Field label="ledger">
        <LedgerLine view={view} />
      </Field>
      <Field label="now">
        <Activity view={view} now={now} />
      </Field>
    </Box>
  );
}

function Activity({ view, now }: { view: RunView; now: number }) {
  const ending = endingText(view);
  if (!ending) {
    // One spinner at a time: a running tool has its own in the tools row.
    const toolSpins = view.calls.some((call) => call.status === 'running');
    return (
      <Text>
        {toolSpins ? null : <Text color="cyan">{spinnerFrame(now)} </Text>}
        {activityText(view, now)}
      </Text>
    );
  }
  const color = ending.tone === 'good' ? 'green' : ending.tone === 'warn' ? 'yellow' : 'red';
  return (
    <>
      <Segments
        parts={ending.parts.map((part, index) =>
          index === 0 ? (
            <Text bold color={color}>
              {part}
            </Text>
          ) : (
            part
          ),
        )}
      />
      {showsResumeHint(view) ? (
        <Text>
          resume with: <Text bold>{view.resumeHint}</Text>
        </Text>
      ) : null}
    </>
  );
}
