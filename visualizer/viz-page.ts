/**
 * The visualizer's one entry point: the machine and (when there is one) a run's journal in,
 * the self-contained HTML page out. Reading the store takes no lock and changes nothing.
 */
import { agentLoopMachine } from '../machines/agent-loop.machine.ts';
import { type RunStore, requireContent } from '../src/store/store.ts';
import { layoutDiagram } from './diagram-layout.ts';
import { diagramSvg } from './diagram-svg.ts';
import type { MachineGraph } from './machine-graph.ts';
import { edgesOf, machineGraphOf } from './machine-graph.ts';
import { pageHtml } from './page-html.ts';
import { readForkNotes } from '../src/fork/fork-notes.ts';
import { runViewOf } from './run-timeline.ts';
import { childRunsOf } from '../src/runtime/run-tree.ts';
import type { MachineView, RunView } from './viz-data.ts';

export interface VizPage {
  html: string;
  graph: MachineGraph;
  run: RunView | null;
}

/** `forkCommand`: how the page spells the fork of a step (see RunView.forkCommand); the CLI passes it. */
export async function vizPage(store: RunStore, forkCommand?: RunView['forkCommand']): Promise<VizPage> {
  const graph = machineGraphOf(agentLoopMachine);
  const [diagram, run] = await Promise.all([layoutDiagram(graph), readRun(store, graph, forkCommand ?? null)]);
  const html = await pageHtml({
    title: run ? `durable-agent · run ${run.runId}` : 'durable-agent · the agent loop',
    graph,
    svg: diagramSvg(diagram, `The ${graph.id} state machine`),
    data: {
      machine: machineViewOf(graph),
      run,
      noRun: run ? null : `No run in ${store.location}: the page shows the machine only.`,
    },
  });
  return { html, graph, run };
}

async function readRun(store: RunStore, graph: MachineGraph, forkCommand: RunView['forkCommand']): Promise<RunView | null> {
  if (!(await store.exists())) return null;
  // The page shows the run's messages: a sealed run read without its key is refused, naming the key.
  const loaded = requireContent(await store.load());
  const notes = store.dir !== undefined ? readForkNotes(store.dir, loaded.header.runId) : [];
  const forks = notes.map((fork) => ({ seq: fork.seq, runId: fork.child.runId, location: fork.child.location }));
  const run = runViewOf(store.location, loaded, graph, { forks, forkCommand });
  // Each sub-agent run beside the reply that called it: the first record whose open calls hold the call.
  const children = await childRunsOf(store, loaded.header.runId);
  run.subagents = children.map((child) => ({
    toolUseId: child.toolUseId,
    runId: child.runId,
    state: child.state,
    turn: child.turn,
    seq: run.steps.find((step) => step.pending.some((call) => call.id === child.toolUseId))?.seq ?? null,
  }));
  return run;
}

function machineViewOf(graph: MachineGraph): MachineView {
  return {
    id: graph.id,
    states: graph.states.map((state) => ({ name: state.name, role: state.role, final: state.final, resting: state.resting, description: state.description })),
    edges: edgesOf(graph).map((edge) => ({ id: edge.id, source: edge.source, target: edge.target, events: [...new Set(edge.transitions.map((t) => t.event))] })),
  };
}
