/** @jsxRuntime automatic @jsxImportSource react */
/** What is safe on disk: the last durable record, how long ago, its size; the ledger. */
import { Text } from 'ink';
import { formatBytes } from '../../words/format.ts';
import { checkpointName, formatDuration, pluralize } from '../format.ts';
import type { RunView } from '../run-view.ts';
import { Segments } from './Segments.tsx';

export function LastSaveLine({ view, now }: { view: RunView; now: number }) {
  const save = view.lastSave;
  if (!save) return <Text dimColor>nothing by this process yet</Text>;
  return (
    <Segments
      parts={[
        <>
          <Text color="green" bold>
            {checkpointName(save.point)}
          </Text>{' '}
          <Text dimColor>({save.state})</Text>
        </>,
        `record ${save.seq}`,
        formatBytes(save.bytes),
        `${formatDuration(now - save.at)} ago`,
      ]}
    />
  );
}

export function LedgerLine({ view }: { view: RunView }) {
  return (
    <Segments
      parts={[
        view.ledgerEntries === null ? <Text dimColor>entries not known yet</Text> : pluralize(view.ledgerEntries, 'entry', 'entries'),
        <Text dimColor>this process wrote {pluralize(view.written.records, 'record', 'records')}</Text>,
        <Text dimColor>{formatBytes(view.written.bytes)}</Text>,
      ]}
    />
  );
}
