/**
 * Every code block of the README and the guide says what it is and holds as printed: JavaScript
 * and TypeScript type-check against the package's entries (strict, as a user's project would),
 * JSON parses (an MCP configuration is read as `--mcp-config` reads it), every `durable-agent`
 * command line parses with the command's own declarations and every `npm run` names a script.
 * `text` blocks are what a command prints, a tree or a grammar: nothing to run. The runnable
 * examples are also run, killed and resumed (readme.test.ts, the quick start's own tests).
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args.ts';
import { checkMcpConfig } from '../../src/mcp/config.ts';
import { REPO } from '../helpers/cli.ts';
import { commandLines, type DocBlock, docBlocks, docFiles, shellWords } from '../helpers/doc-blocks.ts';

const KINDS = ['js', 'ts', 'json', 'sh', 'console', 'text'] as const;
const blocks = docFiles().flatMap(docBlocks);
const where = (block: DocBlock) => `${block.file}:${block.line}`;

/** Where the blocks are written to be compiled: inside the repository, so its node_modules resolve. */
const SCRATCH = path.join(REPO, 'test', 'artifacts', 'doc-blocks');

/**
 * What a fragment may use without declaring it: every value the main entry exports (a fragment
 * shows a call, not its imports) and the few parts an example refers to by name.
 */
async function globalsFile(): Promise<string> {
  const exported = Object.keys(await import('../../src/index.ts')).sort();
  return [
    "import type * as DA from 'durable-agent';",
    'declare global {',
    ...exported.map((name) => `  const ${name}: typeof DA.${name};`),
    '  const store: DA.RunStore;',
    '  const model: DA.Model;',
    '  const tools: DA.ToolDefinition[];',
    '  const myTools: DA.ToolDefinition[];',
    '  const task: string;',
    '  const parts: DA.RunParts;',
    '  const dir: string;',
    '  const search: DA.ToolDefinition;',
    '  const lookupCustomer: DA.ToolDefinition;',
    '  const sendInvoice: DA.ToolDefinition;',
    '  const reviewer: DA.AgentDefinition;',
    '  function capture(): Promise<Buffer>;',
    '}',
    'export {};',
    '',
  ].join('\n');
}

/** Optional packages an example names that this repository does not install. */
const NOT_INSTALLED = "declare module '@statelyai/inspect' {\n  export function createSkyInspector(): { inspect: (event: unknown) => void };\n}\n";

/** The agents module a fleet or drill example imports. */
const AGENTS_MODULE = "import { defineAgent } from 'durable-agent';\nexport const billing = defineAgent({ name: 'billing', model: 'claude-sonnet-5-5', tools: [] });\n";

function compile(files: Map<string, string>): string[] {
  fs.rmSync(SCRATCH, { recursive: true, force: true });
  fs.mkdirSync(SCRATCH, { recursive: true });
  for (const [name, text] of files) fs.writeFileSync(path.join(SCRATCH, name), text);
  const entry = (name: string) => [path.join(REPO, 'src', `${name}.ts`)];
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    noEmit: true,
    strict: true,
    noUncheckedIndexedAccess: true,
    allowJs: true,
    checkJs: true,
    skipLibCheck: true,
    esModuleInterop: true,
    resolveJsonModule: true,
    types: ['node'],
    lib: ['lib.es2023.d.ts'],
    baseUrl: REPO,
    paths: { 'durable-agent': entry('index'), 'durable-agent/errors': entry('errors'), 'durable-agent/testing': entry('testing'), 'durable-agent/postgres': entry('postgres'), 'durable-agent/client': entry('client/index') },
  };
  try {
    const program = ts.createProgram([...files.keys()].map((name) => path.join(SCRATCH, name)), options);
    // Only what the blocks themselves say is judged here: the package's sources have their own check.
    return ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file?.fileName.startsWith(SCRATCH))
      .map((d) => `${path.basename(d.file!.fileName)}:${d.file!.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  } finally {
    fs.rmSync(SCRATCH, { recursive: true, force: true });
  }
}

describe('the code blocks of the README and docs/', () => {
  it('each says what it is', () => {
    expect(blocks.length).toBeGreaterThan(30);
    const unnamed = blocks.filter((block) => !(KINDS as readonly string[]).includes(block.lang)).map((block) => `${where(block)} \`\`\`${block.lang}`);
    expect(unnamed, `tag each block with one of ${KINDS.join(', ')}`).toEqual([]);
  });

  // One TypeScript program of every block: a minute or more on a busy machine, and never a verdict on its speed.
  it('JavaScript and TypeScript type-check, strict, against the package as a user imports it', async () => {
    const code = blocks.filter((block) => block.lang === 'js' || block.lang === 'ts');
    expect(code.length).toBeGreaterThan(10);
    const files = new Map<string, string>([
      ['globals.d.ts', await globalsFile()],
      ['not-installed.d.ts', NOT_INSTALLED],
      ['agents.mjs', AGENTS_MODULE],
      // A block that does not type-check, compiled with the others: the check can fail.
      ['canary.mts', "import { startRun } from 'durable-agent';\nawait startRun({ task: 42 });\n"],
    ]);
    const names = new Map<string, string>();
    code.forEach((block, index) => {
      const name = `block-${index}.${block.lang === 'js' ? 'mjs' : 'mts'}`;
      names.set(name, where(block));
      // A module of its own (top-level await, its own imports), as the example's file would be.
      files.set(name, /^\s*(import|export)\s/m.test(block.code) ? block.code : `${block.code}\nexport {};\n`);
    });
    const all = compile(files);
    expect(all.filter((problem) => problem.startsWith('canary.mts:2: ')).length).toBeGreaterThan(0);
    const problems = all
      .filter((problem) => !problem.startsWith('canary.mts:'))
      .map((problem) => {
        const [file, ...rest] = problem.split(':');
        return `${names.get(file!) ?? file} (block line ${rest[0]}):${rest.slice(1).join(':')}`;
      });
    expect(problems).toEqual([]);
  }, 300_000);

  it('JSON parses; an MCP configuration is one --mcp-config accepts', () => {
    const json = blocks.filter((block) => block.lang === 'json');
    for (const block of json) {
      const value = JSON.parse(block.code) as Record<string, unknown>;
      if ('mcpServers' in value) expect(() => checkMcpConfig(value, where(block), { SHOP_TOKEN: 'token' }, '/srv'), where(block)).not.toThrow();
    }
  });

  it('every durable-agent command line parses with its command’s declarations; every npm run names a script', () => {
    const scripts = Object.keys((JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
    const shells = blocks.filter((block) => block.lang === 'sh' || block.lang === 'console');
    let checked = 0;
    const problems: string[] = [];
    for (const block of shells) {
      for (const line of commandLines(block)) {
        // One command per `&&`; the environment assignments before it are the shell's.
        for (const command of line.split(/\s&&\s/)) {
          const words = shellWords(command).filter((word, i, all) => !(all.slice(0, i + 1).every((w) => /^[A-Z_]+=/.test(w)) && /^[A-Z_]+=/.test(word)));
          const at = words.indexOf('durable-agent');
          if (at >= 0) {
            // `[--flag]` marks a flag one may add: it must parse too.
            const argv = words.slice(at + 1).map((word) => word.replace(/^\[|\]$/g, ''));
            try {
              parseArgs(argv, '/work/project');
              checked += 1;
            } catch (error) {
              problems.push(`${where(block)}: ${command.trim()}\n  ${(error as Error).message}`);
            }
          } else if (words[0] === 'npm' && words[1] === 'run') {
            if (!scripts.includes(words[2]!)) problems.push(`${where(block)}: npm run ${words[2]}: no such script in package.json`);
            checked += 1;
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });
});
