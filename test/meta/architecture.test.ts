/**
 * The layering, kept by a test: the imports of the source are read (TypeScript's own scanner, so
 * comments and strings are not taken for imports) and held against the layers below. An import
 * may go to its own layer or one below; the machine imports nothing but xstate; the store knows
 * no capability; no capability reaches the runtime, the CLI or the live view; no two files
 * import each other, directly or round a loop. And the database has one owner: pg is imported,
 * and SQL written, only under src/store/pg/ (the strings of the source are read with TypeScript's
 * parser, so a comment that names a statement is not taken for one).
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SOURCES = ['machines', 'src', 'visualizer'];

/** Bottom first. A folder of src/ or a top file is a room; each room is in one layer. */
const LAYERS: ReadonlyArray<readonly string[]> = [
  // The HTTP API's client imports only its wire format and the base error: it goes into browser bundles.
  ['machines', 'src/util', 'src/client'],
  ['src/store', 'src/seal'],
  ['src/lang'],
  ['src/model'],
  ['src/tools'],
  ['src/core'],
  ['src/awaits', 'src/budget', 'src/compaction', 'src/control', 'src/telemetry', 'src/mcp', 'src/reconcile', 'src/fork', 'src/prune', 'src/demo'],
  ['src/agent'],
  ['src/runtime'],
  ['src/fleet', 'src/drill', 'src/subagent'],
  ['src/words', 'src/access'],
  ['src/tui', 'visualizer', 'src/console', 'src/serve'],
  ['src/cli'],
  ['src/index.ts', 'src/errors.ts', 'src/postgres.ts', 'src/testing.ts'],
];
const CAPABILITIES = new Set(LAYERS.find((rooms) => rooms.includes('src/awaits')));

interface Import {
  from: string;
  to: string;
}

/** The room of a file: its folder under src/ (or machines/, visualizer/), or the top file itself. */
function roomOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] !== 'src') return parts[0]!;
  return parts.length > 2 ? `src/${parts[1]}` : file;
}

function layerOf(room: string): number {
  const layer = LAYERS.findIndex((rooms) => rooms.includes(room));
  if (layer < 0) throw new Error(`${room} is in no layer of test/meta/architecture.test.ts: add it where it belongs`);
  return layer;
}

function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (/\.(ts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(rel);
    }
  };
  for (const dir of SOURCES) walk(dir);
  return files;
}

/** Every import and export ... from of the source: relative ones as files, packages as their names. */
function readImports(): { files: string[]; imports: Import[]; packages: Map<string, Set<string>> } {
  const files = sourceFiles();
  const imports: Import[] = [];
  const packages = new Map<string, Set<string>>();
  for (const file of files) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    for (const { fileName: spec } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!spec.startsWith('.')) {
        if (!packages.has(file)) packages.set(file, new Set());
        packages.get(file)!.add(spec);
        continue;
      }
      const to = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec)).replace(/\.js$/, '.ts');
      if (!to.startsWith('test/')) imports.push({ from: file, to });
    }
  }
  return { files, imports, packages };
}

/** What breaks the layering, one line each (empty: none). */
function layeringProblems(imports: readonly Import[], packages: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const problems: string[] = [];
  for (const { from, to } of imports) {
    const [a, b] = [roomOf(from), roomOf(to)];
    if (a === b) continue;
    const line = `${from} imports ${to}`;
    if (a === 'machines') problems.push(`${line}: the machine imports nothing but xstate`);
    else if (a === 'src/store' && b !== 'machines' && b !== 'src/util' && b !== 'src/core' && b !== 'src/seal') {
      problems.push(`${line}: the store imports only the machine, util, the codec that seals its content (src/seal) and the port layer (src/core)`);
    }
    else if (CAPABILITIES.has(a) && (b === 'src/runtime' || b === 'src/cli' || b === 'src/tui' || b === 'src/words')) problems.push(`${line}: a capability plugs into the runtime through src/core, never the reverse, and knows no CLI or live view`);
    else if (layerOf(b) > layerOf(a) || (layerOf(b) === layerOf(a) && a !== b && CAPABILITIES.has(a))) problems.push(`${line}: an import runs up (or across capabilities) from ${a} to ${b}`);
  }
  for (const [file, names] of packages) {
    if (roomOf(file) !== 'machines') continue;
    for (const name of names) if (name !== 'xstate') problems.push(`${file} imports ${name}: the machine imports nothing but xstate`);
  }
  return problems;
}

/** Where the database is spoken to: the only folder that imports pg (or a pg-* package) and holds SQL. */
const DATABASE_ROOM = 'src/store/pg/';


/** A statement, not a word of prose: the keywords are upper case, as every statement of the source writes them. */
const SQL_STATEMENT = /\bSELECT\b[\s\S]*\bFROM\b|\bINSERT INTO\b|\bUPDATE da_|\bDELETE FROM\b|\b(?:CREATE|ALTER|DROP) TABLE\b/;

function isPgPackage(name: string): boolean {
  return name === 'pg' || name.startsWith('pg-');
}

/** The text of every string and template literal of a source file (a template's parts joined without what is substituted). */
function stringsOf(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const strings: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) strings.push(node.text);
    else if (ts.isTemplateExpression(node)) strings.push([node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' '));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return strings;
}

/** What speaks to the database outside src/store/pg/, one line each (empty: nothing). */
function databaseProblems(sources: ReadonlyMap<string, string>, packages: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const problems: string[] = [];
  for (const [file, names] of packages) {
    if (file.startsWith(DATABASE_ROOM)) continue;
    for (const name of names) if (isPgPackage(name)) problems.push(`${file} imports ${name}: only src/store/pg/ imports pg; use its functions and its Database type`);
  }
  for (const [file, text] of sources) {
    if (file.startsWith(DATABASE_ROOM)) continue;
    for (const string of stringsOf(file, text)) {
      const statement = SQL_STATEMENT.exec(string);
      if (statement) problems.push(`${file} holds SQL (${JSON.stringify(statement[0].slice(0, 40))}): statements live under src/store/pg/, split by table group`);
    }
  }
  return problems;
}

/** The store's classes: named only inside src/store/ and by the package's entry files, which export them. */
const STORE_CLASSES = new Set(['FileStore', 'FileRuns', 'RunFolderStore', 'StateFolderRuns', 'MemoryStore', 'PgRunStore']);
const ENTRY_FILES = new Set(['src/index.ts', 'src/testing.ts', 'src/postgres.ts']);
/** Where the command line, the console and the live view meet the store: its door, its port, its errors, run ids, the journal's format, and the database's door (pg/index.ts). */
const STORE_DOOR = /^src\/store\/(open-store|store|errors|fs-problems|run-id)\.ts$|^src\/store\/inbox\/(inboxes|signal-inbox|inbox-errors)\.ts$|^src\/store\/journal\/|^src\/store\/pg\/(pool|index)\.ts$/;
const THROUGH_THE_DOOR = ['src/cli', 'src/console', 'src/tui'];

/** The identifiers of a source file (TypeScript's scanner: a class named in a comment or a string is not taken for one). */
function identifiersOf(file: string, text: string): Set<string> {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.LanguageVariant.JSX : ts.LanguageVariant.Standard, text);
  const names = new Set<string>();
  // What each open brace belongs to: a block, or a template's substitution, whose closing brace goes on with the template's text.
  const braces: Array<'block' | 'template'> = [];
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.Identifier) names.add(scanner.getTokenText());
    else if (token === ts.SyntaxKind.TemplateHead) braces.push('template');
    else if (token === ts.SyntaxKind.OpenBraceToken) braces.push('block');
    else if (token === ts.SyntaxKind.CloseBraceToken && braces.pop() === 'template') {
      if (scanner.reScanTemplateToken(false) === ts.SyntaxKind.TemplateMiddle) braces.push('template');
    }
  }
  return names;
}

/** What reaches past the store's door, one line each (empty: nothing). */
function storeDoorProblems(imports: readonly Import[], sources: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const { from, to } of imports) {
    if (!THROUGH_THE_DOOR.includes(roomOf(from)) || roomOf(to) !== 'src/store' || STORE_DOOR.test(to)) continue;
    problems.push(`${from} imports ${to}`);
  }
  for (const [file, text] of sources) {
    if (file.startsWith('src/store/') || ENTRY_FILES.has(file)) continue;
    for (const name of identifiersOf(file, text)) if (STORE_CLASSES.has(name)) problems.push(`${file} names ${name}`);
  }
  return problems;
}

/** The problems not on the list of what is known to remain, each with the way through the door. */
function newStoreDoorProblems(problems: readonly string[]): string[] {
  return problems
    .map((problem) => `${problem}: open stores with openStore / openRunsFolder (src/store/open-store.ts) and ask the port (src/store/store.ts: dir, journalPath, keptInFolder), not a store's class`);
}

function sourceTexts(files: readonly string[]): Map<string, string> {
  return new Map(files.map((file) => [file, fs.readFileSync(path.join(ROOT, file), 'utf8')]));
}

/** Files that import each other round a loop (Tarjan's strongly connected components of more than one file, or a file importing itself). */
function importCircles(imports: readonly Import[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of imports) {
    if (!next.has(from)) next.set(from, []);
    next.get(from)!.push(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let counter = 0;
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const circle: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      circle.push(member);
    } while (member !== node);
    if (circle.length > 1 || (next.get(node) ?? []).includes(node)) circles.push(circle.sort());
  };
  for (const node of next.keys()) if (!index.has(node)) visit(node);
  return circles;
}

describe('the layering of the source', () => {
  const { files, imports, packages } = readImports();

  it('reads the imports of every source file', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(imports.length).toBeGreaterThan(300);
    for (const { to } of imports) expect(fs.existsSync(path.join(ROOT, to)), to).toBe(true);
  });

  it('has no import circle', () => {
    expect(importCircles(imports)).toEqual([]);
  });

  it('imports only down the layers: the machine alone, the store alone, capabilities through the port', () => {
    expect(layeringProblems(imports, packages)).toEqual([]);
  });

  it('imports pg and writes SQL only under src/store/pg/', () => {
    expect(databaseProblems(sourceTexts(files), packages)).toEqual([]);
  });

  it('fails on pg imported, or SQL written, outside src/store/pg/, and not on SQL named in a comment', () => {
    const sources = new Map([
      ['src/fleet/worker.ts', "// reads with SELECT spec FROM da_runs\nconst words = 'select a worker from the list';"],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a file under test, a template literal in it
      ['src/console/fleet-rows.ts', 'const sql = `SELECT id FROM da_runs WHERE ${where}`;'],
      ['src/cli/commands/fleet.ts', "await db.query('DELETE FROM da_events');"],
      ['src/store/pg/queue.ts', "await db.query('INSERT INTO da_runs (id) VALUES ($1)');"],
    ]);
    const importing = new Map([['src/store/pg/pool.ts', new Set(['pg'])], ['src/fleet/run-queue.ts', new Set(['pg'])], ['src/console/console-server.ts', new Set(['pg-cursor'])]]);
    const problems = databaseProblems(sources, importing);
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/src\/fleet\/run-queue.ts imports pg: only src\/store\/pg\//);
    expect(problems.join('\n')).toMatch(/src\/console\/console-server.ts imports pg-cursor/);
    expect(problems.join('\n')).toMatch(/src\/console\/fleet-rows.ts holds SQL/);
    expect(problems.join('\n')).toMatch(/src\/cli\/commands\/fleet.ts holds SQL/);
  });

  it('fails on an import that breaks a rule, and on a circle', () => {
    const breaking: Import[] = [
      { from: 'src/store/file-store.ts', to: 'src/awaits/decide.ts' },
      { from: 'src/compaction/context-compaction.ts', to: 'src/runtime/run-driver.ts' },
      { from: 'src/awaits/decide.ts', to: 'src/cli/main.ts' },
      { from: 'machines/agent-loop.machine.ts', to: 'src/util/redact.ts' },
      { from: 'src/model/model.ts', to: 'src/tools/tool.ts' },
    ];
    const problems = layeringProblems([...imports, ...breaking], new Map([...packages, ['machines/agent-loop.logic.ts', new Set(['node:fs'])]]));
    expect(problems).toHaveLength(breaking.length + 1);
    expect(problems.join('\n')).toMatch(/the store imports only/);
    expect(problems.join('\n')).toMatch(/never the reverse/);
    expect(problems.join('\n')).toMatch(/nothing but xstate/);
    expect(problems.join('\n')).toMatch(/runs up .* from src\/model to src\/tools/);
    const circle = importCircles([...imports, { from: 'src/store/journal/framing.ts', to: 'src/store/file-store.ts' }]);
    expect(circle).toHaveLength(1);
    expect(circle[0]).toEqual(expect.arrayContaining(['src/store/file-store.ts', 'src/store/journal/framing.ts']));
  });

  it('reaches the store only through its door: no store class named outside src/store/, and the CLI, console and live view import only the door', () => {
    const problems = storeDoorProblems(imports, sourceTexts(files));
    expect(newStoreDoorProblems(problems)).toEqual([]);
  });

  it('fails on a store class named, or a store file imported, past the door; not on a class named in a comment or a string', () => {
    const sources = new Map([
      ['src/cli/commands/list.ts', "import { FileStore } from '../../store/file-store.ts';\nconst store = new FileStore(dir);"],
      ['src/fleet/worker.ts', 'const store = new PgRunStore(pool, id);'],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a file under test, a template literal in it
      ['src/runtime/run-handle.ts', '// unlike a MemoryStore\nconst advice = `resumeRun({ store: new FileStore(${dir}) })`;'],
      ['src/index.ts', "export { FileStore } from './store/file-store.ts';"],
    ]);
    const importing: Import[] = [
      { from: 'src/cli/commands/list.ts', to: 'src/store/file-store.ts' },
      { from: 'src/tui/run-view.ts', to: 'src/store/pg/pg-store.ts' },
      { from: 'src/cli/run-store.ts', to: 'src/store/open-store.ts' },
      { from: 'src/fleet/worker.ts', to: 'src/store/pg/leases.ts' },
    ];
    const problems = newStoreDoorProblems(storeDoorProblems(importing, sources));
    expect(problems.map((problem) => problem.split(':')[0])).toEqual([
      'src/cli/commands/list.ts imports src/store/file-store.ts',
      'src/tui/run-view.ts imports src/store/pg/pg-store.ts',
      'src/cli/commands/list.ts names FileStore',
      'src/fleet/worker.ts names PgRunStore',
    ]);
  });
});
