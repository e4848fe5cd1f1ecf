/**
 * Every link of the README and the guide leads somewhere: a relative link to a file that exists,
 * an anchor to a heading of its page. (The site's build checks the links between its pages too:
 * docs-site.test.ts.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/cli.ts';
import { docFiles } from '../helpers/doc-blocks.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** The anchor a heading gets: GitHub's and VitePress's rule for plain words (lower case, spaces to dashes). */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = fs.readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
}

/** The links of a page outside its code: [text](target) and ![alt](target). */
function linksOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

/** The links of a page that lead nowhere, and how many it has. */
function deadLinksOf(file: string): { dead: string[]; count: number } {
  const dead: string[] = [];
  const links = linksOf(file).filter((link) => !/^[a-z]+:/i.test(link)); // a web address is not followed from a test
  for (const link of links) {
    const [target, anchor] = link.split('#') as [string, string | undefined];
    const resolved = target === '' ? file : path.resolve(path.dirname(file), target);
    // The site's own pages are linked without their .md, as VitePress writes them.
    const page = [resolved, `${resolved}.md`, path.join(resolved, 'index.md')].find((candidate) => fs.existsSync(candidate));
    const generated = path.relative(REPO, resolved).startsWith(path.join('docs', 'api'));
    if (!page && !generated) dead.push(`${link} (no such file)`);
    else if (page && anchor && page.endsWith('.md') && !anchorsOf(page).has(anchor)) dead.push(`${link} (no heading #${anchor} in ${path.relative(REPO, page)})`);
  }
  return { dead, count: links.length };
}

describe('the links of the README and docs/', () => {
  it('lead to files that exist and to headings their pages have', () => {
    const results = docFiles().map((file) => ({ file, ...deadLinksOf(path.join(REPO, file)) }));
    expect(results.flatMap(({ file, dead }) => dead.map((link) => `${file}: ${link}`))).toEqual([]);
    expect(results.reduce((sum, { count }) => sum + count, 0)).toBeGreaterThan(20);
  });

  it('the check finds a dead link and a missing heading', () => {
    const page = path.join(tempDir(), 'page.md');
    fs.writeFileSync(page, '# Page\n\n## Budgets and limits\n\n[ok](#budgets-and-limits) [gone](missing.md) [no heading](#nowhere) [self](page.md#page)\n');
    expect(deadLinksOf(page)).toEqual({ dead: ['missing.md (no such file)', `#nowhere (no heading #nowhere in ${path.relative(REPO, page)})`], count: 4 });
  });
});
