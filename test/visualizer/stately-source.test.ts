/**
 * `viz --stately`: the printed source is a real createMachine({...}) module; imported with
 * XState it is the same machine as machines/agent-loop.machine.ts (states, transitions, guards,
 * actions, descriptions), which is what Stately Studio gets when it imports it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyStateMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { machineGraphOf } from '../../visualizer/machine-graph.ts';
import { statelySource } from '../../visualizer/stately-source.ts';
import { REPO } from '../helpers/cli.ts';

const source = statelySource(machineGraphOf(agentLoopMachine), 'machines/agent-loop.machine.ts');

describe('the machine as Stately Studio source', () => {
  it('is one createMachine call with named actions and guards, and no code', () => {
    expect(source.match(/createMachine\(/g)).toHaveLength(1);
    expect(source).toContain("import { createMachine } from 'xstate';");
    expect(source).toContain("guard: 'replyWantsTools && turnsRemain'");
    expect(source).toContain("entry: ['requestModelReply']");
    expect(source).not.toMatch(/=>|function/);
  });

  it('imports back, with XState, as the same machine', async () => {
    // Written inside the repository so that `xstate` resolves; test/artifacts/ is git-ignored.
    const file = path.join(REPO, 'test', 'artifacts', `stately-source-${process.pid}.mjs`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, source);
    try {
      const module = (await import(pathToFileURL(file).href)) as Record<string, AnyStateMachine>;
      const imported = module[agentLoopMachine.id];
      expect(imported).toBeDefined();
      expect(machineGraphOf(imported!)).toEqual(machineGraphOf(agentLoopMachine));
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
