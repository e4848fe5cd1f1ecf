/**
 * The machine as the visualizer reads it: every state with its role, every transition on an
 * arrow, guards named the way the diagram and Stately Studio show them.
 */
import { toDirectedGraph } from '@xstate/graph';
import { and, createMachine, not, or, setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { agentLoopMachine } from '../../machines/agent-loop.machine.ts';
import type { AgentStateName } from '../../machines/agent-loop.types.ts';
import { layoutDiagram } from '../../visualizer/diagram-layout.ts';
import { diagramSvg } from '../../visualizer/diagram-svg.ts';
import { edgeLabelLines, edgesOf, machineGraphOf, STATE_ROLES } from '../../visualizer/machine-graph.ts';

const graph = machineGraphOf(agentLoopMachine);
const machineStates = Object.keys(agentLoopMachine.root.states);

describe('reading the agent loop machine', () => {
  it('has every state of the machine, each with a role, checkpoints A and B where the design puts them', () => {
    expect(graph.states.map((s) => s.name)).toEqual(machineStates);
    for (const state of graph.states) expect(state.role, state.name).not.toBeNull();
    expect(Object.keys(STATE_ROLES).sort()).toEqual([...machineStates].sort());
    const roleOf = (name: AgentStateName) => graph.states.find((s) => s.name === name)!.role;
    expect(roleOf('pendingTool')).toBe('checkpoint-a');
    expect(roleOf('closed')).toBe('checkpoint-b');
    expect(roleOf('effectRecorded')).toBe('ledger');
    expect(graph.states.filter((s) => s.final).map((s) => s.name)).toEqual(['done', 'stoppedAtMaxTurns', 'failed', 'cancelled', 'stoppedAtBudget']);
    expect(graph.states.filter((s) => s.initial).map((s) => s.name)).toEqual(['awaitingModel']);
  });

  it('puts every transition of the machine on exactly one arrow, in the machine’s order; the root’s from every state that is not final', () => {
    const machine = toDirectedGraph(agentLoopMachine);
    const live = machine.children.filter((node) => node.stateNode.type !== 'final');
    // A root transition without a target is taken in place: drawn at the state it is taken in.
    const targetOf = (edge: (typeof machine.edges)[number], node: (typeof live)[number]) => (edge.transition.target === undefined ? node.stateNode.key : edge.target.key);
    const directed = [
      ...machine.children.flatMap((node) => node.edges.map((edge) => `${edge.source.key} -${edge.label.text}-> ${edge.target.key}`)),
      ...live.flatMap((node) => machine.edges.map((edge) => `${node.stateNode.key} -${edge.label.text}-> ${targetOf(edge, node)}`)),
    ];
    expect(machine.edges.map((edge) => edge.label.text)).toEqual(['CANCEL', 'REOPEN']);
    const cancelledFrom = edgesOf(graph).filter((edge) => edge.target === 'cancelled').map((edge) => edge.source);
    expect(cancelledFrom).toEqual(graph.states.filter((s) => !s.final).map((s) => s.name));
    const drawn = edgesOf(graph).flatMap((edge) => edge.transitions.map((t) => `${edge.source} -${t.event}-> ${edge.target}`));
    expect([...drawn].sort()).toEqual([...directed].sort());
    const ids = edgesOf(graph).map((edge) => edge.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('labels arrows with their events and guards; the unguarded fallback reads [otherwise]', () => {
    const edge = (id: string) => edgesOf(graph).find((e) => e.id === id)!;
    expect(edgeLabelLines(edge('awaitingModel->pendingTool'))).toEqual(['MODEL_REPLY', '[replyWantsTools', ' && turnsRemain]']);
    expect(edgeLabelLines(edge('closed->failed'))).toEqual([
      'MODEL_REPLY',
      '[replyPausesTurn',
      ' && pauseLimitReached]',
      '[otherwise]',
      'MODEL_REPLY_INVALID',
    ]);
    expect(edgeLabelLines(edge('pendingTool->effectRecorded'))).toEqual(['TOOL_RESULT', '[isLastOpenCall]', '[isOpenCall]']);
    expect(edgeLabelLines(edge('effectRecorded->closed'))).toEqual(['CLOSE_TURN', '[allCallsRecorded]']);
  });

  it('names higher-order guards, keeping the grouping of nested ones', () => {
    const machine = setup({
      guards: { a: () => true, b: () => true, c: () => true },
    }).createMachine({
      initial: 'one',
      states: {
        one: {
          on: {
            GO: [
              { guard: and(['a', or(['b', 'c'])]), target: 'two' },
              { guard: not(and(['a', 'b'])), target: 'two' },
              { guard: { type: 'c' }, target: 'two' },
            ],
          },
        },
        two: { type: 'final' },
      },
    });
    expect(machineGraphOf(machine).states[0]!.transitions.map((t) => t.guard)).toEqual(['a && (b || c)', '!(a && b)', 'c']);
  });

  it('refuses a machine with inline guards, which could not be named on the diagram or in Stately', () => {
    const machine = createMachine({ initial: 'one', states: { one: { on: { GO: { guard: () => true, target: 'two' } } }, two: {} } });
    expect(() => machineGraphOf(machine)).toThrow(/inline \(unnamed\) guard/);
  });
});

describe('the diagram', () => {
  it('draws every state and every arrow, with nothing placed outside the drawing', async () => {
    const diagram = await layoutDiagram(graph);
    expect(diagram.states.map((s) => s.state.name).sort()).toEqual([...machineStates].sort());
    expect(diagram.edges).toHaveLength(edgesOf(graph).length);
    for (const state of diagram.states) {
      expect(state.x).toBeGreaterThanOrEqual(0);
      expect(state.x + state.width).toBeLessThanOrEqual(diagram.width);
      expect(state.y + state.height).toBeLessThanOrEqual(diagram.height);
    }
    for (const edge of diagram.edges) expect(edge.points.length, edge.edge.id).toBeGreaterThanOrEqual(2);
    const svg = diagramSvg(diagram, 'the <loop>');
    for (const name of machineStates) expect(svg).toContain(`data-state="${name}"`);
    expect(svg).toContain('aria-label="the &#60;loop&#62;"');
    expect(svg.match(/class="edge"/g)).toHaveLength(edgesOf(graph).length);
    expect(svg).toContain('>checkpoint A</text>');
    expect(svg).toContain('>checkpoint B</text>');
    // Each arrow's tooltip gives the description of every transition it draws.
    expect(svg.match(/<g class="edge"[^>]*><title>/g)).toHaveLength(edgesOf(graph).length);
    expect(svg).toContain(
      '<title>MODEL_REPLY [replyWantsTools &#38;&#38; turnsRemain]: The reply names tools and a turn is left: record the calls (checkpoint A), then run them.</title>',
    );
  });

  it('draws the loop top to bottom: the initial state above checkpoint A, A above the ledger state, that above B', async () => {
    const diagram = await layoutDiagram(graph);
    const y = (name: string) => diagram.states.find((s) => s.state.name === name)!.y;
    expect(y('awaitingModel')).toBeLessThan(y('pendingTool'));
    expect(y('pendingTool')).toBeLessThan(y('effectRecorded'));
    expect(y('effectRecorded')).toBeLessThan(y('closed'));
  });
});
