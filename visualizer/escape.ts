/** Escaping for text put into markup and into an inline script. */

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * JSON that can sit inside `<script type="application/json">`: `<` is written as \u003c so no
 * string in the data (a tool result, a message) can close the script element. U+2028 and
 * U+2029 are escaped too, for older JavaScript parsers.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}
