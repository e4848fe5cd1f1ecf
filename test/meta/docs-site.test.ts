/**
 * The guide builds into a static site (`npm run docs:build`: the API reference written from the
 * types by TypeDoc, then VitePress), every page of its sidebar rendered; a dead link between pages
 * fails the build.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const VITEPRESS = path.join(REPO, 'node_modules', 'vitepress', 'bin', 'vitepress.js');

describe('the docs site', () => {
  it('builds with the API reference, every guide page rendered', () => {
    const built = spawnSync('npm', ['run', 'docs:build'], { cwd: REPO, encoding: 'utf8', timeout: 600_000 });
    expect(built.status, `${built.stdout}\n${built.stderr}`).toBe(0);
    const site = path.join(REPO, 'docs', '.vitepress', 'dist');
    const pages = fs.readdirSync(path.join(REPO, 'docs')).filter((name) => name.endsWith('.md'));
    for (const page of pages) expect(fs.existsSync(path.join(site, page.replace(/\.md$/, '.html'))), page).toBe(true);
    // The reference, from the types: the main entry's startRun and an error class of durable-agent/errors.
    expect(fs.readFileSync(path.join(site, 'api', 'durable-agent', 'functions', 'startRun.html'), 'utf8')).toContain('startRun');
    expect(fs.existsSync(path.join(site, 'api', 'durable-agent', 'errors', 'classes', 'StoreCorruptError.html'))).toBe(true);
    // The API sidebar names the entries; each entry's page links its members.
    const startRunPage = fs.readFileSync(path.join(site, 'api', 'durable-agent', 'functions', 'startRun.html'), 'utf8');
    expect(startRunPage).toContain('href="/api/durable-agent/errors/"');
    expect(startRunPage).not.toContain('href="/api/durable-agent/functions/resumeRun"');
    expect(fs.readFileSync(path.join(site, 'api', 'durable-agent', 'index.html'), 'utf8')).toContain('href="./functions/startRun"');
  }, 900_000);

  it('refuses to build with a link to a page that does not exist', () => {
    const docs = tempDir();
    fs.writeFileSync(path.join(docs, 'index.md'), '# Home\n\n[fine](./other.md) and [gone](./missing.md)\n');
    fs.writeFileSync(path.join(docs, 'other.md'), '# Other\n');
    const built = spawnSync(process.execPath, [VITEPRESS, 'build', docs], { cwd: REPO, encoding: 'utf8', timeout: 300_000 });
    expect(built.status).not.toBe(0);
    // Its words as a reader sees them, whatever colours the terminal (or CI) asked for.
    const said = stripVTControlCharacters(`${built.stdout}${built.stderr}`);
    expect(said).toMatch(/dead link \.\/missing in file index\.md/);
  }, 600_000);
});
