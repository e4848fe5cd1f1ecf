/** Lines cut to a width for the terminal. */

/** Cut to `width` characters (code points, so no surrogate pair is split), the last one an ellipsis. */
export function cutTo(line: string, width: number): string {
  const chars = Array.from(line);
  return chars.length <= width ? line : `${chars.slice(0, width - 1).join('')}…`;
}
