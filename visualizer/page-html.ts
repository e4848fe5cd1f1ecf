/**
 * Puts the page together as one self-contained HTML file: the diagram as inline SVG, the run
 * as inline JSON, the style and the script inlined (the script is bundled from visualizer/page/
 * by the build: see page-assets.ts).
 * A Content-Security-Policy forbids every fetch, so the page works offline and cannot call out.
 */
import { escapeXml, jsonForScript } from './escape.ts';
import type { MachineGraph } from './machine-graph.ts';
import { ROLE_BADGES } from './machine-graph.ts';
import { pageScript, pageStyle } from './page-assets.ts';
import type { VizPageData } from './viz-data.ts';

export interface PageParts {
  title: string;
  graph: MachineGraph;
  svg: string;
  data: VizPageData;
}

export async function pageHtml(parts: PageParts): Promise<string> {
  const [script, style] = await Promise.all([pageScript().then(scriptForInlining), pageStyle()]);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>${escapeXml(parts.title)}</title>
<style>
${style}
</style>
</head>
<body>
<header class="top">
<h1>durable-agent <span class="dim">· the agent loop and one run</span></h1>
<p id="run-summary" class="summary"></p>
</header>
<main class="layout">
<section class="panel diagram-panel" aria-labelledby="diagram-title">
<h2 id="diagram-title">The loop <small>machine <code>${escapeXml(parts.graph.id)}</code> · the selected record's state and the arrow into it are highlighted</small></h2>
<div class="diagram">
${parts.svg}
</div>
${legend(parts.graph)}
</section>
<section class="panel timeline-panel" aria-labelledby="timeline-title">
<h2 id="timeline-title">Timeline <small>one row per persisted transition · click a row or press ←/→</small></h2>
<div class="timeline-head" aria-hidden="true"><span>#</span><span>turn</span><span>state</span><span>event</span><span>tool</span><span>bytes</span><span>time</span></div>
<div id="timeline" class="timeline-scroll"></div>
</section>
<section class="panel context-panel" id="context" aria-live="polite"></section>
</main>
<script type="application/json" id="viz-data">${jsonForScript(parts.data)}</script>
<script>
${script}
</script>
</body>
</html>
`;
}

function legend(graph: MachineGraph): string {
  const rows = graph.states.map(
    (state) =>
      `<li class="legend-${state.role ?? 'none'}"><code>${escapeXml(state.name)}</code>${state.role ? ` <span class="badge">${escapeXml(ROLE_BADGES[state.role])}</span>` : ''}: ${escapeXml(state.description ?? '')}</li>`,
  );
  return `<details class="legend"><summary>What the states mean</summary><ul>${rows.join('')}</ul></details>`;
}

/** Inside <script>, only "</script" could end the element early; in JavaScript, "<\/" means the same. */
function scriptForInlining(code: string): string {
  return code.replace(/<\/(script)/gi, '<\\/$1');
}
