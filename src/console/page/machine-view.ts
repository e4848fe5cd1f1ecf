/**
 * The machine's diagram on a run's page, drawn at a size its labels can be read at (1:1, the
 * arrows' labels 11 px, the states' names 14 px) in a window that pans and zooms: drag or the
 * wheel to move, ctrl and the wheel (or a pinch) to zoom at the pointer, buttons to zoom, to see
 * the whole machine and to come back to the state the run rests in. The window follows the run's state until the person moves it; the arrows' labels can
 * be hidden to see the shape.
 */
import { el } from './dom.ts';

export interface MachineView {
  /** The diagram's box: its tools and its window. */
  element: HTMLElement;
  /** Puts the console's drawing of the machine in (its own SVG markup, no run's data). */
  draw(svgMarkup: string): void;
  /** Marks the state the run rests in, and brings it into view while the person has not moved the view. */
  mark(state: string): void;
  /** Stops watching the window's size (the page shows another view). */
  stop(): void;
}

const MIN_SCALE = 0.25;
const MAX_SCALE = 4;
const STEP = 1.25;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export function machineView(): MachineView {
  const canvas = el('div', { class: 'diagram-view', id: 'diagram', title: 'drag or the wheel to move, ctrl + the wheel to zoom' });
  const zoomLevel = el('span', { class: 'dim', id: 'diagram-zoom' });
  const labels = el('input', { type: 'checkbox', id: 'diagram-labels', checked: 'checked' });
  let svg: SVGSVGElement | null = null;
  /** The whole drawing, in its own units. */
  let whole: Box = { x: 0, y: 0, width: 1, height: 1 };
  /** The top left corner of the window, in the drawing's units, and how many pixels a unit takes. */
  let left = 0;
  let top = 0;
  let scale = 1;
  let current: string | null = null;
  /** The window follows the run's state until the person pans or zooms. */
  let following = true;
  let placed = false;

  const size = () => ({ width: canvas.clientWidth || 1, height: canvas.clientHeight || 1 });
  const apply = () => {
    if (!svg) return;
    const { width, height } = size();
    // The window stays on the drawing; a drawing smaller than the window sits in its middle.
    left = within(left, whole.x, whole.width, width / scale);
    top = within(top, whole.y, whole.height, height / scale);
    svg.setAttribute('viewBox', `${round(left)} ${round(top)} ${round(width / scale)} ${round(height / scale)}`);
    zoomLevel.textContent = `${Math.round(scale * 100)}%`;
  };
  /** Zooms to `next`, keeping the drawing's point under (px, py) of the window where it is. */
  const zoomTo = (next: number, px: number, py: number) => {
    const to = clamp(next, MIN_SCALE, MAX_SCALE);
    left += px / scale - px / to;
    top += py / scale - py / to;
    scale = to;
    apply();
  };
  const centreOn = (box: Box) => {
    const { width, height } = size();
    left = box.x + box.width / 2 - width / scale / 2;
    top = box.y + box.height / 2 - height / scale / 2;
    apply();
  };
  const stateBox = (state: string): Box | null => {
    const rect = svg?.querySelector(`[data-state="${CSS.escape(state)}"] > rect`);
    if (!rect) return null;
    const number = (name: string) => Number(rect.getAttribute(name) ?? 0);
    return { x: number('x'), y: number('y'), width: number('width'), height: number('height') };
  };
  const showCurrent = () => {
    following = true;
    scale = 1;
    const box = current ? stateBox(current) : null;
    // Without a state, the top of the machine, where it starts.
    centreOn(box ?? { x: whole.x, y: whole.y, width: whole.width, height: size().height / scale });
  };
  const fitWhole = () => {
    const { width, height } = size();
    scale = clamp(Math.min(width / whole.width, height / whole.height), MIN_SCALE, MAX_SCALE);
    centreOn(whole);
  };
  const moved = () => {
    following = false;
  };
  const paint = () => {
    svg?.querySelectorAll('[data-state]').forEach((node) => {
      node.classList.toggle('current', node.getAttribute('data-state') === current);
    });
  };

  // The wheel moves the window over the drawing, and the page once the window is at the drawing's
  // edge (as a box that scrolls does); with ctrl or ⌘ (a trackpad's pinch) it zooms at the pointer.
  canvas.addEventListener(
    'wheel',
    (event) => {
      if (!svg) return;
      // A wheel that counts in lines or pages is taken as 40 pixels a step.
      const step = event.deltaMode === 0 ? 1 : 40;
      if (event.ctrlKey || event.metaKey) {
        event.preventDefault();
        moved();
        const at = canvas.getBoundingClientRect();
        // One turn zooms at most about 1.6 times.
        zoomTo(scale * Math.exp(-clamp(event.deltaY * step, -200, 200) / 400), event.clientX - at.left, event.clientY - at.top);
        return;
      }
      const from = [left, top];
      left += (event.deltaX * step) / scale;
      top += (event.deltaY * step) / scale;
      apply();
      if (left === from[0] && top === from[1]) return;
      event.preventDefault();
      moved();
    },
    { passive: false },
  );
  let drag: { id: number; x: number; y: number } | null = null;
  canvas.addEventListener('pointerdown', (event) => {
    if (!svg || event.button !== 0) return;
    drag = { id: event.pointerId, x: event.clientX, y: event.clientY };
    canvas.setPointerCapture(event.pointerId);
    canvas.classList.add('dragging');
  });
  canvas.addEventListener('pointermove', (event) => {
    if (!drag || event.pointerId !== drag.id) return;
    moved();
    left -= (event.clientX - drag.x) / scale;
    top -= (event.clientY - drag.y) / scale;
    drag = { ...drag, x: event.clientX, y: event.clientY };
    apply();
  });
  const endDrag = (event: PointerEvent) => {
    if (!drag || event.pointerId !== drag.id) return;
    drag = null;
    canvas.classList.remove('dragging');
  };
  canvas.addEventListener('pointerup', endDrag);
  canvas.addEventListener('pointercancel', endDrag);
  // The window keeps its corner when the page's width changes; the first size it gets places the drawing.
  const resized = new ResizeObserver(() => {
    if (!svg) return;
    if (!placed && canvas.clientWidth > 0) {
      placed = true;
      showCurrent();
    } else apply();
  });
  resized.observe(canvas);

  const button = (action: string, text: string, title: string, onclick: () => void) => el('button', { type: 'button', 'data-diagram': action, title, text, onclick });
  const zoomAtCentre = (factor: number) => {
    moved();
    const { width, height } = size();
    zoomTo(scale * factor, width / 2, height / 2);
  };
  labels.onchange = () => canvas.classList.toggle('no-labels', !labels.checked);
  const tools = el('div', { class: 'diagram-tools' }, [
    button('zoom-out', '−', 'zoom out', () => zoomAtCentre(1 / STEP)),
    zoomLevel,
    button('zoom-in', '+', 'zoom in', () => zoomAtCentre(STEP)),
    button('whole', 'whole machine', 'the whole machine in the window', () => {
      moved();
      fitWhole();
    }),
    button('current', 'current state', 'the state the run rests in, at full size', showCurrent),
    el('label', null, [labels, ' arrow labels']),
  ]);

  return {
    element: el('div', { class: 'diagram-box' }, [tools, canvas]),
    draw(svgMarkup) {
      canvas.innerHTML = svgMarkup;
      svg = canvas.querySelector('svg');
      if (!svg) return;
      const [x = 0, y = 0, width = 1, height = 1] = (svg.getAttribute('viewBox') ?? '').split(/\s+/).map(Number);
      whole = { x, y, width, height };
      // The window, not the drawing's own size, decides the drawing's size on the page.
      svg.removeAttribute('width');
      svg.removeAttribute('height');
      svg.setAttribute('preserveAspectRatio', 'xMinYMin meet');
      paint();
      if (canvas.clientWidth > 0) {
        placed = true;
        showCurrent();
      }
    },
    mark(state) {
      const changed = state !== current;
      current = state;
      paint();
      if (changed && following && placed) showCurrent();
    },
    stop() {
      resized.disconnect();
    },
  };
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), Math.max(low, high));
}

/** Where a window of `view` units starts along a drawing from `start` of `length` units, kept on it. */
function within(at: number, start: number, length: number, view: number): number {
  return length <= view ? start + (length - view) / 2 : clamp(at, start, start + length - view);
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
