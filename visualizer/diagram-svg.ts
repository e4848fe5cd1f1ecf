/**
 * Draws a laid-out machine as SVG markup. Pure string building; every state and arrow carries
 * data attributes (`data-state`, `data-edge`, `data-events`) for the page to highlight them.
 */
import type { PlacedDiagram, PlacedEdge, PlacedState, Point } from './diagram-layout.ts';
import { LABEL_PADDING, STATE_PADDING_Y, TEXT } from './diagram-layout.ts';
import { escapeXml } from './escape.ts';

/** Room above the diagram for the initial-state arrow. */
const INITIAL_ARROW = 22;


export function diagramSvg(diagram: PlacedDiagram, title: string): string {
  const width = diagram.width;
  const height = diagram.height + INITIAL_ARROW;
  return [
    `<svg class="machine" xmlns="http://www.w3.org/2000/svg" viewBox="0 ${-INITIAL_ARROW} ${width} ${height}" width="${width}" height="${height}" style="--diagram-width: ${width}px" role="img" aria-label="${escapeXml(title)}">`,
    '<defs>',
    '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrow-head"/></marker>',
    '<marker id="arrow-taken" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrow-head taken"/></marker>',
    '</defs>',
    ...diagram.edges.map(edgeMarkup),
    ...diagram.states.map(stateMarkup),
    '</svg>',
  ].join('\n');
}

function edgeMarkup({ edge, points, label }: PlacedEdge): string {
  const events = [...new Set(edge.transitions.map((t) => t.event))].join(' ');
  const parts = [
    `<g class="edge" data-edge="${escapeXml(edge.id)}" data-source="${escapeXml(edge.source)}" data-target="${escapeXml(edge.target)}" data-events="${escapeXml(events)}">`,
  ];
  const described = edge.transitions.filter((t) => t.description);
  if (described.length > 0) {
    const lines = described.map((t) => `${t.event}${t.guard ? ` [${t.guard}]` : t.otherwise ? ' [otherwise]' : ''}: ${t.description}`);
    parts.push(`<title>${escapeXml(lines.join('\n'))}</title>`);
  }
  parts.push(`<path d="${pathOf(points)}" marker-end="url(#arrow)"/>`);
  if (label) {
    const x = label.x + LABEL_PADDING;
    const lines = label.lines.map(
      (line, i) => `<tspan x="${fmt(x)}" y="${fmt(label.y + LABEL_PADDING + (i + 1) * TEXT.edgeLabel.line - 3)}">${escapeXml(line)}</tspan>`,
    );
    parts.push(
      `<g class="edge-label"><rect x="${fmt(label.x)}" y="${fmt(label.y)}" width="${fmt(label.width)}" height="${fmt(label.height)}" rx="3"/>`,
      `<text font-size="${TEXT.edgeLabel.size}">${lines.join('')}</text></g>`,
    );
  }
  parts.push('</g>');
  return parts.join('');
}

function stateMarkup(placed: PlacedState): string {
  const { state, badge } = placed;
  // A state a resume leaves (stopped at a limit) is drawn as the resting state it is, without an end's ring.
  const ends = state.final && !state.resting;
  const classes = ['state', state.role ? `role-${state.role}` : '', ends ? 'final' : '', state.resting ? 'resting' : '', state.initial ? 'initial' : '']
    .filter(Boolean)
    .join(' ');
  const centerX = placed.x + placed.width / 2;
  const nameY = placed.y + STATE_PADDING_Y + TEXT.stateName.line - 4;
  const parts = [`<g class="${classes}" data-state="${escapeXml(state.name)}">`];
  if (state.description) parts.push(`<title>${escapeXml(`${state.name}: ${state.description}`)}</title>`);
  if (state.initial) {
    parts.push(
      `<circle class="initial-dot" cx="${fmt(centerX)}" cy="${fmt(placed.y - INITIAL_ARROW + 4)}" r="4"/>`,
      `<path class="initial-arrow" d="M${fmt(centerX)},${fmt(placed.y - INITIAL_ARROW + 8)} L${fmt(centerX)},${fmt(placed.y)}" marker-end="url(#arrow)"/>`,
    );
  }
  parts.push(`<rect x="${fmt(placed.x)}" y="${fmt(placed.y)}" width="${fmt(placed.width)}" height="${fmt(placed.height)}" rx="8"/>`);
  if (ends) {
    parts.push(`<rect class="final-ring" x="${fmt(placed.x + 3)}" y="${fmt(placed.y + 3)}" width="${fmt(placed.width - 6)}" height="${fmt(placed.height - 6)}" rx="6"/>`);
  }
  parts.push(`<text class="name" x="${fmt(centerX)}" y="${fmt(nameY)}" font-size="${TEXT.stateName.size}" text-anchor="middle">${escapeXml(state.name)}</text>`);
  if (badge) {
    parts.push(
      `<text class="badge" x="${fmt(centerX)}" y="${fmt(nameY + TEXT.badge.line)}" font-size="${TEXT.badge.size}" text-anchor="middle">${escapeXml(badge)}</text>`,
    );
  }
  parts.push('</g>');
  return parts.join('');
}

function pathOf(points: readonly Point[]): string {
  return points.map((p, i) => `${i === 0 ? 'M' : 'L'}${fmt(p.x)},${fmt(p.y)}`).join(' ');
}

function fmt(n: number): string {
  return String(Math.round(n * 10) / 10);
}
