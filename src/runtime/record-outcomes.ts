/**
 * Records the outcomes of a turn's calls: the ledger writes. Outcomes that finished together
 * (gathered while the write before them waited for the disk: tool-scheduler.ts) are one write
 * (journal-unit.ts): each is still its own TOOL_RESULT transition and record; one fsync makes
 * them all durable. The turn's last outcome, with what finished beside it, is written without
 * an fsync of its own: checkpoint B, written right after it, makes them durable before the
 * next model call, the first thing that depends on them.
 *
 * If the write fails and nothing of it is on disk, the outcomes are still the truth about calls
 * that happened, so they go on to the model as they are (an is_error instead would make the model
 * try again under a new id and repeat the effect); the user is alerted. If the store cannot tell
 * what it holds (a failed fsync), the run stops there: a next side effect started on a ledger the
 * disk may not have could run twice after a kill. An outcome the journal cannot encode is recorded
 * as "it ran, its result is lost" instead: the call happened, and a resume must not run it again.
 *
 * Every outcome passes here before the ledger and the model see it (a call run, a call a resume
 * verified), so this is where the secrets the process knows are taken out of what any tool
 * returned or threw: a file read that held the API key is stored and sent as [redacted].
 */
import type { AnnouncedEffect } from '../../machines/agent-loop.effects.ts';
import { effectOfActions } from '../../machines/agent-loop.effects.ts';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { PendingCall } from '../../machines/agent-loop.types.ts';
import { StoreWriteError } from '../store/errors.ts';
import { RecordEncodeError } from '../store/journal/framing.ts';
import { unrecordableOutcome } from '../tools/recordable.ts';
import { redactSecretsIn, secretsInToolResults } from '../util/redact.ts';
import type { JournalStep } from './journal-unit.ts';
import type { JournalWriter } from './journal-writer.ts';
import { transition } from './machine-step.ts';
import type { Finished } from './tool-scheduler.ts';

/** Tells that the ledger write of a call failed (its outcome still goes to the model). */
type WriteFailed = (call: PendingCall, error: StoreWriteError) => void;

export async function recordOutcomes(writer: JournalWriter, writeFailed: WriteFailed, given: readonly Finished[], othersRunning: boolean, mayReplace = true): Promise<AnnouncedEffect | null> {
  const group = withoutSecrets(given);
  const before = writer.snapshot;
  const steps: JournalStep[] = [];
  let snapshot = before;
  let effect: AnnouncedEffect | null = null;
  for (const { call, outcome, note } of group) {
    const [next, taken] = transition(agentLoopMachine, snapshot, { type: 'TOOL_RESULT', outcome });
    if (next === snapshot) throw new Error(`the machine did not take the result of ${call.id} in ${String(snapshot.value)}`);
    steps.push({ snapshot: next, event: 'TOOL_RESULT', note, at: Date.now() });
    snapshot = next;
    effect = effectOfActions(taken);
  }
  writer.snapshot = snapshot;
  const last = effect === 'requestTurnClose';
  try {
    await writer.persistSteps(steps, { sync: !last, groupCommit: othersRunning });
  } catch (error) {
    if (error instanceof RecordEncodeError && mayReplace) {
      writer.snapshot = before;
      return group.length === 1
        ? recordOutcomes(writer, writeFailed, [{ ...group[0]!, outcome: unrecordableOutcome(group[0]!.call, error.problem) }], othersRunning, false)
        : recordEachAlone(writer, writeFailed, group, othersRunning);
    }
    // Unless the disk may hold something else than the process believes (a failed fsync): then
    // nothing more starts, and the resume reads what is really there.
    if (!(error instanceof StoreWriteError) || error.outcomeUnknown) throw error;
    for (const { call } of group) writeFailed(call, error);
  }
  for (const { outcome } of group) writer.took({ type: 'TOOL_RESULT', outcome });
  return last ? writer.step({ type: 'CLOSE_TURN' }) : effect;
}

/** A unit one of whose outcomes the journal cannot encode: each on its own, so that only that one is replaced. */
async function recordEachAlone(writer: JournalWriter, writeFailed: WriteFailed, group: readonly Finished[], othersRunning: boolean): Promise<AnnouncedEffect | null> {
  let effect: AnnouncedEffect | null = null;
  for (const finished of group) effect = await recordOutcomes(writer, writeFailed, [finished], othersRunning);
  return effect;
}

/** The outcomes with the secrets the process knows taken out of their content; the same list when it knows none. */
function withoutSecrets(group: readonly Finished[]): readonly Finished[] {
  const secrets = secretsInToolResults();
  if (secrets.length === 0) return group;
  return group.map((finished) => {
    const content = redactSecretsIn(finished.outcome.content, secrets);
    return content === finished.outcome.content ? finished : { ...finished, outcome: { ...finished.outcome, content } };
  });
}
