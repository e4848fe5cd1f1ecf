/**
 * bench:compare's table in the docs: `--write-docs` replaces what stands between the region's
 * marker comments of a page with the report of the run, in a text block; the markers and the
 * rest of the page (the prose that reads the figures) are left as they are. Pure but for
 * writeDocsTables, which reads and writes the pages.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The pages that may hold the table: each that has the region gets it. */
export const DOC_PAGES = ['docs/performance.md', 'README.md'] as const;

export const REGION_START = '<!-- #region bench-compare -->';
export const REGION_END = '<!-- #endregion bench-compare -->';

export class DocsRegionError extends Error {
  override readonly name = 'DocsRegionError';
  constructor(
    readonly page: string,
    readonly problem: string,
  ) {
    super(`${page}: ${problem}; the table goes between a line ${REGION_START} and a line ${REGION_END}, each once`);
  }
}

function lineIndexes(lines: readonly string[], marker: string): number[] {
  return lines.flatMap((line, at) => (line.trim() === marker ? [at] : []));
}

export function hasRegion(text: string): boolean {
  return lineIndexes(text.split('\n'), REGION_START).length > 0;
}

/** `text` (a page named `page`) with its region holding `report` in a text block. */
export function rewriteRegion(page: string, text: string, report: string): string {
  const lines = text.split('\n');
  const starts = lineIndexes(lines, REGION_START);
  const ends = lineIndexes(lines, REGION_END);
  if (starts.length !== 1 || ends.length !== 1) throw new DocsRegionError(page, `found ${starts.length} start and ${ends.length} end marker(s)`);
  const [start] = starts as [number];
  const [end] = ends as [number];
  if (end < start) throw new DocsRegionError(page, 'the end marker comes before the start marker');
  return [...lines.slice(0, start + 1), '```text', ...report.split('\n'), '```', ...lines.slice(end)].join('\n');
}

/** Every page of DOC_PAGES under `repo` that has the region, with its text, the region checked (thrown if wrong, or if none has it). */
function pagesWithRegion(repo: string): Array<{ page: string; file: string; text: string }> {
  const pages = DOC_PAGES.map((page) => ({ page, file: path.join(repo, page) }))
    .filter(({ file }) => fs.existsSync(file))
    .map(({ page, file }) => ({ page, file, text: fs.readFileSync(file, 'utf8') }))
    .filter(({ text }) => hasRegion(text));
  if (pages.length === 0) throw new DocsRegionError(DOC_PAGES.join(' or '), "no page has the table's region");
  for (const { page, text } of pages) rewriteRegion(page, text, '');
  return pages;
}

/** The pages --write-docs will rewrite: checked before the benchmarks run, not after. */
export function docsTablePages(repo: string): string[] {
  return pagesWithRegion(repo).map(({ page }) => page);
}

/** Writes `report` into every page of DOC_PAGES under `repo` that has the region; returns those pages. */
export function writeDocsTables(repo: string, report: string): string[] {
  // Every page's new text first: a page whose markers are wrong leaves all of them as they were.
  const rewritten = pagesWithRegion(repo).map(({ page, file, text }) => ({ page, file, text: rewriteRegion(page, text, report) }));
  for (const { file, text } of rewritten) {
    fs.writeFileSync(`${file}.tmp`, text);
    fs.renameSync(`${file}.tmp`, file);
  }
  return rewritten.map(({ page }) => page);
}
