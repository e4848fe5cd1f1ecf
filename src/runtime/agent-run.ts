/**
 * A run's agent pinned: a start with an agent definition writes its name and version in the
 * run's header, so that a resume, an attach or a worker with another version of the agent is
 * refused instead of driving the run with instructions or tools it did not start with.
 */
import { type AgentDefinition, acceptedVersions } from '../agent/agent-definition.ts';
import type { PinnedFields, RunSetting } from '../core/run-settings.ts';
import type { PinnedAgent } from '../store/journal/journal-record.ts';
import { DurableAgentError, type ErrorKind } from '../util/durable-agent-error.ts';

export class AgentVersionMismatchError extends DurableAgentError {
  static override readonly kind: ErrorKind = 'refused';
  override readonly name = 'AgentVersionMismatchError';
  constructor(
    readonly location: string,
    /** What the run was started with. */
    readonly pinned: PinnedAgent,
    /** The definition offered now: its name and the versions it accepts (its own first). */
    readonly offered: { name: string; versions: readonly string[] },
  ) {
    super(
      pinned.name !== offered.name
        ? `The run in ${location} was started with the agent ${pinned.name}, not ${offered.name}. Nothing was run. Drive it with the agent ${pinned.name}.`
        : `The run in ${location} was started with the agent ${pinned.name} at version ${pinned.version}; this definition is version ${offered.versions[0]}` +
            `${offered.versions.length > 1 ? ` (it accepts ${offered.versions.join(', ')})` : ''}. Nothing was run. ` +
            `Drive it with the definition it started with, or, if the change cannot confuse a run in flight, add "${pinned.version}" to the agent's compatibleWith.`,
    );
  }
}

export function hasAgent(options: object): options is { agent: AgentDefinition } {
  return (options as { agent?: unknown }).agent !== undefined;
}

export function pinOf(agent: AgentDefinition): PinnedAgent {
  return { name: agent.name, version: agent.version };
}

/**
 * The agent as a setting of the run: its name and version pinned, and a resume by another
 * refused; one that declares the run's version compatible accepts that its tools differ.
 */
export const agentSetting: RunSetting<AgentDefinition | undefined> = {
  pin: (run, agent) => (agent ? { ...run, pinned: { ...run.pinned, agent: pinOf(agent) } } : run),
  check(run, agent) {
    checkAgentPin(run.location, run.pinned, agent);
    return declaresCompatible(run.pinned, agent) ? { ...run, toolChangeAccepted: true } : run;
  },
};

/** Refuses an agent that may not drive the run this header starts (a run started without one may be driven by any). */
export function checkAgentPin(location: string, header: PinnedFields, agent: AgentDefinition | undefined): void {
  const pinned = header.agent;
  if (!pinned || !agent) return;
  const versions = acceptedVersions(agent);
  if (pinned.name !== agent.name || !versions.includes(pinned.version)) throw new AgentVersionMismatchError(location, pinned, { name: agent.name, versions });
}

/** Whether the agent accepts the run's pinned version as another version of its own (compatibleWith): it has said its changes are safe for the run. */
function declaresCompatible(header: PinnedFields, agent: AgentDefinition | undefined): boolean {
  const pinned = header.agent;
  return pinned !== undefined && agent !== undefined && pinned.name === agent.name && pinned.version !== agent.version && (agent.compatibleWith ?? []).includes(pinned.version);
}
