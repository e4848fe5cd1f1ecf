/**
 * Lays the machine graph out with ELK (layered, top to bottom): where each state box, arrow and
 * arrow label goes. Text is measured by character count in a monospace font, so the layout is
 * the same on every machine and needs no browser.
 */
import ELK from 'elkjs/lib/elk.bundled.js';
import type { ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js';
import type { GraphEdge, GraphState, MachineGraph } from './machine-graph.ts';
import { edgeLabelLines, edgesOf, ROLE_BADGES } from './machine-graph.ts';

/** Font metrics the SVG uses too (diagram-svg.ts): monospace, so width = characters × advance. */
export const TEXT = {
  stateName: { size: 14, advance: 8.6, line: 18 },
  badge: { size: 11, advance: 6.8, line: 14 },
  edgeLabel: { size: 11, advance: 6.8, line: 14 },
} as const;

const STATE_PADDING_X = 14;
/**
 * A state box is never narrower than this: as the machine grows (more final states side by
 * side), the page scales the diagram down, and a short name (done) would shrink to a speck first.
 */
const STATE_MIN_WIDTH = 96;
export const STATE_PADDING_Y = 8;
export const LABEL_PADDING = 4;

export interface Point {
  x: number;
  y: number;
}

export interface Box extends Point {
  width: number;
  height: number;
}

export interface PlacedState extends Box {
  state: GraphState;
  badge: string | null;
}

export interface PlacedEdge {
  edge: GraphEdge;
  /** Start, bends, end. */
  points: Point[];
  label: (Box & { lines: string[] }) | null;
}

export interface PlacedDiagram {
  width: number;
  height: number;
  states: PlacedState[];
  edges: PlacedEdge[];
}

export async function layoutDiagram(graph: MachineGraph): Promise<PlacedDiagram> {
  const edges = edgesOf(graph);
  const labelLines = new Map(edges.map((edge) => [edge.id, edgeLabelLines(edge)]));
  const badges = new Map(graph.states.map((state) => [state.name, state.role ? ROLE_BADGES[state.role] : null]));
  const input: ElkNode = {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.edgeRouting': 'ORTHOGONAL',
      // Arrows into one state meet it at one point: a state many states lead to (cancelled) stays narrow.
      'elk.layered.mergeEdges': 'true',
      'elk.layered.spacing.nodeNodeBetweenLayers': '40',
      'elk.spacing.nodeNode': '24',
      'elk.spacing.edgeLabel': '4',
      'elk.spacing.edgeEdge': '6',
      'elk.layered.spacing.edgeNodeBetweenLayers': '18',
      'elk.edgeLabels.placement': 'CENTER',
      'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
      // The machine's own order (initial state first, the loop, then the finals) decides which
      // arrows point back up: the loop reads top to bottom, like the README's sketch.
      'elk.layered.cycleBreaking.strategy': 'MODEL_ORDER',
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
      'elk.padding': '[top=12,left=12,bottom=12,right=12]',
    },
    children: graph.states.map((state) => ({ id: state.name, ...stateSize(state.name, badges.get(state.name) ?? null) })),
    edges: edges.map(
      (edge): ElkExtendedEdge => ({
        id: edge.id,
        sources: [edge.source],
        targets: [edge.target],
        labels: [{ id: `${edge.id}#label`, layoutOptions: { 'elk.edgeLabels.inline': 'true' }, text: labelLines.get(edge.id)!.join('\n'), ...labelSize(labelLines.get(edge.id)!) }],
      }),
    ),
  };
  const laid = await new ELK().layout(input);
  const byName = new Map(graph.states.map((state) => [state.name, state]));
  const byId = new Map(edges.map((edge) => [edge.id, edge]));
  return {
    width: Math.ceil(laid.width ?? 0),
    height: Math.ceil(laid.height ?? 0),
    states: (laid.children ?? []).map((node) => ({
      state: byName.get(node.id)!,
      badge: badges.get(node.id) ?? null,
      ...boxOf(node),
    })),
    edges: (laid.edges ?? []).map((laidEdge) => {
      const edge = byId.get(laidEdge.id)!;
      const section = laidEdge.sections?.[0];
      if (!section) throw new Error(`ELK returned no route for the transition ${edge.id}`);
      const label = laidEdge.labels?.[0];
      return {
        edge,
        points: [section.startPoint, ...(section.bendPoints ?? []), section.endPoint],
        label: label ? { ...boxOf(label), lines: labelLines.get(edge.id)! } : null,
      };
    }),
  };
}

function stateSize(name: string, badge: string | null): { width: number; height: number } {
  const nameWidth = name.length * TEXT.stateName.advance;
  const badgeWidth = badge ? badge.length * TEXT.badge.advance : 0;
  return {
    width: Math.max(STATE_MIN_WIDTH, Math.ceil(Math.max(nameWidth, badgeWidth) + 2 * STATE_PADDING_X)),
    height: TEXT.stateName.line + (badge ? TEXT.badge.line : 0) + 2 * STATE_PADDING_Y,
  };
}

function labelSize(lines: readonly string[]): { width: number; height: number } {
  const longest = Math.max(...lines.map((line) => line.length));
  return {
    width: Math.ceil(longest * TEXT.edgeLabel.advance + 2 * LABEL_PADDING),
    height: lines.length * TEXT.edgeLabel.line + 2 * LABEL_PADDING,
  };
}

function boxOf(shape: { x?: number; y?: number; width?: number; height?: number }): Box {
  return { x: shape.x ?? 0, y: shape.y ?? 0, width: shape.width ?? 0, height: shape.height ?? 0 };
}
