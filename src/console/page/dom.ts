/** DOM helpers of the console's page: every text goes in as text (textContent, text nodes), never as markup. */

/** An element's attributes: `text` is its text, `onclick` its click handler; null, undefined and false leave an attribute out. */
export interface Attributes {
  text?: string;
  onclick?: () => void;
  [attribute: string]: string | null | undefined | false | (() => void);
}

/** A child: an element, or a string that becomes a text node; an empty string, null, undefined and false are left out. */
export type Child = Node | string | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attributes | null, children?: readonly Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (key === 'text') node.textContent = value as string;
      else if (key === 'onclick') node.onclick = value as () => void;
      else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value as string);
    }
  }
  for (const child of children ?? []) if (child) node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  return node;
}

/** A header row of a table. */
export function headerRow(names: readonly string[]): HTMLTableRowElement {
  return el('tr', null, names.map((name) => el('th', { text: name })));
}

/** The message box says how an action went. */
export function say(box: HTMLElement, ok: boolean, text: string): void {
  box.className = `message ${ok ? 'ok' : 'bad'}`;
  box.textContent = text;
}
