/**
 * `viz --stately`: the printed source is a real `setup({...}).createMachine({...})` module.
 * Imported with XState it is the same machine as machines/agent-loop.machine.ts (states,
 * transitions, guards, actions, descriptions), which is what Stately Studio gets when it imports
 * it; and plain `node` runs it as it is, its stub guards answering from the events.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyStateMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import { machineGraphOf } from '../../visualizer/machine-graph.ts';
import { statelySource } from '../../visualizer/stately-source.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const source = statelySource(machineGraphOf(agentLoopMachine), 'machines/agent-loop.machine.ts');

/** A directory outside the repository with xstate installed, as a user's project has it. */
function projectWithXState(): string {
  const dir = tempDir('da-stately-');
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(path.join(REPO, 'node_modules', 'xstate'), path.join(dir, 'node_modules', 'xstate'), 'dir');
  fs.writeFileSync(path.join(dir, 'agent-loop.stately.mjs'), source);
  return dir;
}

describe('the machine as Stately Studio source', () => {
  it('is one setup().createMachine call: combined guards as and([...]), a stub for each guard and action, no other code', () => {
    expect(source.match(/createMachine\(/g)).toHaveLength(1);
    expect(source).toContain("import { and, setup } from 'xstate';");
    expect(source).toContain("guard: and(['replyWantsTools', 'turnsRemain'])");
    expect(source).toContain("entry: ['requestModelReply']");
    const graph = machineGraphOf(agentLoopMachine);
    const actions = new Set(graph.states.flatMap((s) => [...s.entry, ...s.transitions.flatMap((t) => t.actions)]));
    const guards = new Set(Object.keys(agentLoopMachine.implementations.guards));
    for (const name of actions) expect(source).toContain(`    ${name}: () => {},`);
    for (const name of guards) expect(source).toContain(`    ${name}: ({ event }) => event.guards?.${name} === true,`);
    expect(source.match(/=>/g)).toHaveLength(actions.size + guards.size);
    // Every transition carries its description, as in the machine; the root's (CANCEL, REOPEN of a live run) are printed once, on the root.
    const transitions = [...graph.states.flatMap((s) => s.transitions.filter((t) => !t.inherited)), ...graph.transitions];
    expect(graph.transitions.map((t) => t.event)).toEqual(['CANCEL', 'REOPEN']);
    expect(transitions.every((t) => t.description)).toBe(true);
    expect(source.match(/description: /g)).toHaveLength(graph.states.filter((s) => s.description).length + transitions.length);
    expect(source).toContain("target: '.cancelled'");
  });

  it('imports back, with XState, as the same machine', async () => {
    const file = path.join(projectWithXState(), 'agent-loop.stately.mjs');
    const module = (await import(pathToFileURL(file).href)) as Record<string, AnyStateMachine>;
    const imported = module[agentLoopMachine.id];
    expect(imported).toBeDefined();
    expect(machineGraphOf(imported!)).toEqual(machineGraphOf(agentLoopMachine));
  });

  it('runs with plain node as it is: an actor takes MODEL_REPLY, TOOL_RESULT and CLOSE_TURN through the stubs', () => {
    const dir = projectWithXState();
    fs.writeFileSync(
      path.join(dir, 'drive.mjs'),
      [
        "import { createActor } from 'xstate';",
        "import { agentLoop } from './agent-loop.stately.mjs';",
        'const seen = [];',
        'const actor = createActor(agentLoop);',
        'actor.subscribe({ next: (s) => seen.push(s.value), error: (e) => { console.error(e); process.exit(1); } });',
        'actor.start();',
        "actor.send({ type: 'MODEL_REPLY', guards: { replyWantsTools: true, turnsRemain: true } });",
        "actor.send({ type: 'TOOL_RESULT', guards: { isLastOpenCall: true } });",
        "actor.send({ type: 'CLOSE_TURN', guards: { allCallsRecorded: true } });",
        "actor.send({ type: 'MODEL_REPLY', guards: { replyAsksToGoOn: true } });",
        "actor.send({ type: 'MODEL_REPLY' });",
        'console.log(JSON.stringify(seen));',
      ].join('\n'),
    );
    const out = execFileSync(process.execPath, [path.join(dir, 'drive.mjs')], { cwd: dir, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual(['awaitingModel', 'pendingTool', 'effectRecorded', 'closed', 'awaitingModel', 'failed']);
  });
});
