/** A small element builder: text goes in as text nodes, never as markup. */

type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, value);
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return element;
}

/** Seconds since the run began, to the millisecond. */
export function formatOffset(ms: number): string {
  return `+${(ms / 1000).toFixed(3)} s`;
}

export function formatClock(at: number): string {
  return new Date(at).toISOString().replace('T', ' ').replace('Z', ' UTC');
}
