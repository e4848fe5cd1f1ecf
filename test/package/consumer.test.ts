/**
 * The package as another project gets it: `npm pack` of this checkout's build, installed into a
 * scratch project (no pg, no tsx, no esbuild there), then used as a user would: the README's
 * example with plain node, a strict TypeScript consumer compiled and run (one of its tools typed by
 * a zod 4 schema), the CLI through npx, the console's page served from the build,
 * durable-agent/postgres without pg. publint and arethetypeswrong check the same tarball.
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, REPO } from '../helpers/cli.ts';
import { DEMO_PLAIN_LINES } from '../helpers/demo-lines.ts';
import { EXAMPLE_DONE_OUTPUT, readmeProgrammaticExample, readmeQuickStart } from '../helpers/readme-example.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { packInto } from '../../scripts/pack.ts';

const pkg = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
const resolveHere = createRequire(path.join(REPO, 'package.json'));
const TSC = resolveHere.resolve('typescript/bin/tsc');
const PUBLINT = binOf('publint', 'publint');
const ATTW = binOf('@arethetypeswrong/cli', 'attw');

/** The script behind a dev dependency's command, run with this node (not a shell's PATH). */
function binOf(name: string, command: string): string {
  const manifest = path.join(REPO, 'node_modules', name, 'package.json');
  return path.join(path.dirname(manifest), JSON.parse(fs.readFileSync(manifest, 'utf8')).bin[command]);
}

/** The child's environment: none of the npm_* settings `npm test` puts there (a prefix must not point back here). */
function env(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const base = cliEnv(extra);
  for (const name of Object.keys(base)) if (/^npm_/i.test(name)) delete base[name];
  return base;
}

function run(command: string, args: string[], cwd: string, extra: Record<string, string | undefined> = {}): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd, env: env(extra), encoding: 'utf8', timeout: 120_000 });
  if (result.error) throw result.error;
  return result;
}

function ok(result: SpawnSyncReturns<string>): string {
  expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

let scratch: string;
let tarball: string;
let packedFiles: string[];
let consumer: string;

beforeAll(() => {
  scratch = tempDir('da-package-');
  // dist/ is fresh (npm test builds first; test/helpers/fresh-build.ts otherwise): packed as `npm run pack` packs it.
  ({ tarball, files: packedFiles } = packInto(scratch));

  consumer = path.join(scratch, 'consumer');
  fs.mkdirSync(consumer);
  fs.writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
  // The same versions as this checkout's lockfile, so npm ci's cache serves them.
  const types = ['@types/node', '@types/pg'].map((name) => `${name}@${pkg.devDependencies[name]}`);
  // zod from this checkout's node_modules (a folder, so npm links it: nothing fetched); it has no dependencies of its own.
  const zod = path.join(REPO, 'node_modules', 'zod');
  ok(run('npm', ['install', tarball, ...types, zod, '--prefer-offline', '--no-audit', '--no-fund'], consumer));
}, 300_000);

// Compiling, installing and linting a package are whole processes: on a busy machine they take
// minutes, and a test's verdict must not depend on how busy it is.
describe('the packed package', { timeout: 300_000 }, () => {
  it('holds the build, the bin, the licence and the README, and no sources', () => {
    expect(packedFiles).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'bin/durable-agent.mjs', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/errors.js', 'dist/src/errors.d.ts', 'dist/src/testing.js', 'dist/src/client/index.js', 'dist/src/client/index.d.ts', 'dist/src/store/pg/index.js', 'dist/visualizer/page/page.js', 'dist/src/console/page/console.js', 'dist/src/console/page/style.css']));
    // The browser pages' modules ship as their bundles only.
    expect(packedFiles.filter((file) => /^dist\/(visualizer|src\/console)\/page\//.test(file) && !/\/(page|console)\.js$|\/style\.css$/.test(file))).toEqual([]);
    expect(packedFiles.filter((file) => !/^(dist\/|bin\/|package\.json$|README\.md$|LICENSE$)/.test(file))).toEqual([]);
    expect(packedFiles.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(packedFiles.filter((file) => file.includes('page-bundle'))).toEqual([]);
  });

  it('ships a manifest without install scripts: installing the tarball meets no script (prepare builds a checkout only)', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(consumer, 'node_modules', 'durable-agent', 'package.json'), 'utf8'));
    expect(manifest.scripts).toBeUndefined();
    expect(manifest.bin).toBeDefined();
    const again = path.join(scratch, 'again');
    fs.mkdirSync(again);
    fs.writeFileSync(path.join(again, 'package.json'), JSON.stringify({ name: 'again', version: '1.0.0', private: true, type: 'module' }));
    const installed = run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], again);
    expect(installed.status, installed.stderr).toBe(0);
    expect(installed.stderr).not.toContain('durable-agent@');
  });

  it('installs without pg, tsx or esbuild: they are not runtime dependencies', () => {
    for (const name of ['pg', 'tsx', 'esbuild', 'typescript', '@modelcontextprotocol/sdk']) expect(fs.existsSync(path.join(consumer, 'node_modules', name)), name).toBe(false);
    expect(fs.existsSync(path.join(consumer, 'node_modules', 'durable-agent', 'dist', 'src', 'index.js'))).toBe(true);
  });

  it("runs the README's programmatic example with plain node: a crash on demand, then the resume", () => {
    fs.writeFileSync(path.join(consumer, 'invoice.mjs'), readmeProgrammaticExample());
    const crashed = run(process.execPath, ['invoice.mjs'], consumer, { CRASH_AFTER: 'after-effect-write:1' });
    expect(crashed.signal).toBe('SIGKILL');
    expect(crashed.stdout).toBe('');
    const resumed = run(process.execPath, ['invoice.mjs'], consumer);
    expect(resumed.stderr).toBe('');
    expect(resumed.stdout).toBe(EXAMPLE_DONE_OUTPUT);
    expect(fs.readFileSync(path.join(consumer, 'outbox.txt'), 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('type-checks a strict nodenext TypeScript consumer, whose output runs with plain node', () => {
    const project = path.join(consumer, 'ts');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'invoice.ts'), readmeProgrammaticExample());
    // The README's Quick start, saved as agent.ts, type-checks as it stands (compiled only: it needs a key to run).
    fs.writeFileSync(path.join(project, 'agent.ts'), readmeQuickStart());
    fs.writeFileSync(path.join(project, 'typed.ts'), TYPED_CONSUMER);
    fs.writeFileSync(path.join(project, 'kit.ts'), TESTING_CONSUMER);
    fs.writeFileSync(path.join(project, 'zod-tool.ts'), ZOD_CONSUMER);
    fs.writeFileSync(path.join(project, 'client.ts'), CLIENT_CONSUMER);
    const compilerOptions = {
      target: 'ES2022',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      strict: true,
      exactOptionalPropertyTypes: true,
      noPropertyAccessFromIndexSignature: true,
      noUncheckedIndexedAccess: true,
      // As `tsc --init` sets it: xstate 5.33's own declarations do not pass exactOptionalPropertyTypes (checked below).
      skipLibCheck: true,
      types: ['node'],
      outDir: 'out',
    };
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['invoice.ts', 'agent.ts', 'typed.ts', 'kit.ts', 'zod-tool.ts', 'client.ts'] }));
    ok(run(process.execPath, [TSC, '-p', '.'], project));

    const typed = run(process.execPath, [path.join('out', 'typed.js')], project);
    expect(typed.stderr).toBe('');
    expect(typed.stdout).toBe('done typed ok\nledger 1, state done\ncrash at after-save-a:1\nhistory START MODEL_USAGE MODEL_REPLY; again: refused\n');
    const kit = run(process.execPath, [path.join('out', 'kit.js')], project);
    expect(kit.stderr).toBe('');
    expect(kit.stdout).toBe('kit: crashed at after-save-a:1, then done: from the kit\n');
    const zodTool = run(process.execPath, [path.join('out', 'zod-tool.js')], project);
    expect(zodTool.stderr).toBe('');
    expect(zodTool.stdout).toBe('zod: done, ran with Oslo/c, refused toolu_2 (/city: Too small: expected string to have >=1 characters), sent {"required":["city"]}\n');
    const client = run(process.execPath, [path.join('out', 'client.js')], project);
    expect(client.stderr).toBe('');
    expect(client.stdout).toBe('client: created true, events state text-delta end, 404 not-found, one ApiError class: true\n');

    // Our declarations themselves (not skipped): the only errors allowed are inside xstate's.
    const strict = run(process.execPath, [TSC, '-p', '.', '--noEmit', '--skipLibCheck', 'false'], project);
    const errorFiles = new Set([...strict.stdout.matchAll(/^(\S+?)\(\d+,\d+\): error/gm)].map((match) => match[1]!));
    expect([...errorFiles].filter((file) => !file.startsWith('../node_modules/xstate/'))).toEqual([]);
  });

  it('runs the CLI from the installed package: npx durable-agent demo, --help and viz (its page script prebuilt)', () => {
    const demo = run('npx', ['--no-install', 'durable-agent', 'demo', '--dir', 'demo-run'], consumer);
    expect(demo.stderr).toBe('');
    expect(demo.stdout.trimEnd().split('\n')).toEqual(DEMO_PLAIN_LINES);
    expect(demo.status).toBe(0);

    expect(ok(run('npx', ['--no-install', 'durable-agent', '--help'], consumer))).toMatch(/Usage:\s+durable-agent /);

    const viz = ok(run('npx', ['--no-install', 'durable-agent', 'viz', '--dir', 'demo-run'], consumer));
    expect(viz).toContain('[viz] wrote');
    const html = fs.readFileSync(path.join(consumer, 'demo-run', '.durable-agent', 'viz.html'), 'utf8');
    expect(html).toMatch(/<script>\n.{1000,}/);
  });

  it('serves the console from the installed package: its page script bundled by the build, its style', async () => {
    const dir = path.join(consumer, 'console-runs');
    fs.mkdirSync(dir);
    const bin = path.join(consumer, 'node_modules', 'durable-agent', 'bin', 'durable-agent.mjs');
    const child = spawn(process.execPath, [bin, 'console', '--dir', dir, '--port', '0'], { cwd: consumer, env: env({ DURABLE_AGENT_CONSOLE_TOKEN: 'ana:package-test-secret' }) });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const deadline = Date.now() + 30_000;
      let origin: string | undefined;
      while (!(origin = /\[console\] (http:\/\/[^/\s]+)\//.exec(output)?.[1])) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the console did not start: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const page = await fetch(`${origin}/`);
      expect(await page.text()).toContain('<script src="/console.js" defer></script>');
      const script = await fetch(`${origin}/console.js`);
      expect(script.headers.get('content-type')).toContain('text/javascript');
      const code = await script.text();
      expect(code.length).toBeGreaterThan(5000);
      expect(code).toContain('durable-agent-console-token');
      expect(await (await fetch(`${origin}/console.css`)).text()).toContain('.console-top');
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });

  it('every error class of every installed entry extends DurableAgentError and declares a kind; the main entry exports at most 40 values', () => {
    // Every entry of the installed manifest, as a program imports it; durable-agent/postgres refuses to load without pg, as it should here.
    const probe = `
      import fs from 'node:fs';
      import * as api from 'durable-agent';
      const manifest = JSON.parse(fs.readFileSync('node_modules/durable-agent/package.json', 'utf8'));
      const classes = new Map();
      const unloaded = [];
      for (const subpath of Object.keys(manifest.exports).filter((subpath) => subpath !== './package.json')) {
        const specifier = subpath === '.' ? 'durable-agent' : 'durable-agent/' + subpath.slice(2);
        let entry;
        try { entry = await import(specifier); }
        catch (error) { if (!(error instanceof api.OptionalDependencyMissingError)) throw error; unloaded.push(specifier + ' needs ' + error.packageName); continue; }
        for (const [name, value] of Object.entries(entry)) {
          if (typeof value === 'function' && value.prototype instanceof Error && value !== api.DurableAgentError) classes.set(value, specifier + ' ' + name);
        }
      }
      const wrong = [...classes].filter(([value]) => !(value.prototype instanceof api.DurableAgentError) || !api.ERROR_KINDS.includes(value.kind)).map(([, name]) => name);
      console.log(JSON.stringify({ count: classes.size, wrong, unloaded, mainValues: Object.keys(api).length }));`;
    const result = run(process.execPath, ['--input-type=module', '-e', probe], consumer);
    expect(result.stderr).toBe('');
    const { count, wrong, unloaded, mainValues } = JSON.parse(result.stdout);
    expect(count).toBeGreaterThan(30);
    expect(wrong).toEqual([]);
    expect(unloaded).toEqual(['durable-agent/postgres needs pg']);
    expect(mainValues).toBeLessThanOrEqual(40);
  });

  it('durable-agent/postgres without pg: a PgMissingError that names the package; the main entry works without it', () => {
    const probe = `
      import { FileStore } from 'durable-agent';
      import { PgMissingError } from 'durable-agent/errors';
      import { MemoryStore } from 'durable-agent/testing';
      new FileStore('state');
      new MemoryStore();
      try { await import('durable-agent/postgres'); console.log('imported'); }
      catch (error) { console.log(error instanceof PgMissingError, error.name, error.message); }`;
    const result = run(process.execPath, ['--input-type=module', '-e', probe], consumer);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^true PgMissingError durable-agent\/postgres and the fleet commands need the PostgreSQL client "pg".*npm install pg/);
  });

  it('MCP tools without @modelcontextprotocol/sdk: mcpTools() rejects with McpSdkMissingError, run --mcp-config-file is refused (exit 2)', () => {
    const probe = `
      import { mcpTools } from 'durable-agent';
      import { McpSdkMissingError } from 'durable-agent/errors';
      try { await mcpTools({ mcpServers: { x: { command: 'node' } } }); console.log('connected'); }
      catch (error) { console.log(error instanceof McpSdkMissingError, error.name, error.message); }`;
    const result = run(process.execPath, ['--input-type=module', '-e', probe], consumer);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^true McpSdkMissingError MCP tools need "@modelcontextprotocol\/sdk".*npm install @modelcontextprotocol\/sdk/);
    fs.writeFileSync(path.join(consumer, '.mcp.json'), JSON.stringify({ mcpServers: { x: { command: 'node' } } }));
    const cli = run('npx', ['--no-install', 'durable-agent', 'run', '--model', 'm', '--task', 't', '--mcp-config-file', '.mcp.json'], consumer, { ANTHROPIC_API_KEY: 'k' });
    expect(cli.stderr).toMatch(/^durable-agent: MCP tools need "@modelcontextprotocol\/sdk"/);
    expect(cli.stderr).not.toMatch(/\n\s+at /);
    expect(cli.status).toBe(2);
  });

  it('the fleet commands without pg: refused (exit 2) with the package to install, no stack trace', () => {
    const migrate = run('npx', ['--no-install', 'durable-agent', 'db', 'migrate', '--database-url', 'postgresql://nobody@127.0.0.1:1/none'], consumer);
    expect(migrate.stdout).toBe('');
    expect(migrate.stderr).toMatch(/^durable-agent: durable-agent\/postgres and the fleet commands need the PostgreSQL client "pg".*npm install pg/);
    expect(migrate.stderr).not.toMatch(/\n\s+at /);
    expect(migrate.status).toBe(2);
  });

  it('traces asked for without the OpenTelemetry SDK: refused (exit 2) naming the package, nothing run; without the variable the demo runs', () => {
    expect(fs.existsSync(path.join(consumer, 'node_modules', '@opentelemetry', 'sdk-trace-base'))).toBe(false);
    const dir = fs.mkdtempSync(path.join(scratch, 'otel-'));
    const refused = run('npx', ['--no-install', 'durable-agent', 'demo', '--dir', dir], consumer, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' });
    expect(refused.stderr).toMatch(/^durable-agent: OTEL_EXPORTER_OTLP_ENDPOINT .* the package @opentelemetry\/sdk-trace-base is not installed\. Nothing was run\. .*npm install @opentelemetry\/sdk-trace-base/);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    expect(refused.status).toBe(2);
    expect(fs.existsSync(path.join(dir, '.durable-agent'))).toBe(false);
    ok(run('npx', ['--no-install', 'durable-agent', 'demo', '--dir', dir], consumer));
  });

  it('passes publint --strict and arethetypeswrong (ESM-only profile)', () => {
    expect(ok(run(process.execPath, [PUBLINT, 'run', tarball, '--strict'], scratch))).toContain('All good');
    ok(run(process.execPath, [ATTW, tarball, '--profile', 'esm-only', '--format', 'ascii'], scratch));
  });

  it('is ready to publish: npm publish --dry-run takes the tarball as it is; in the checkout it is refused before anything is built', () => {
    // npm 11's dry run asks the registry whether the version is taken; --offline keeps the test off the network.
    const published = run('npm', ['publish', tarball, '--dry-run', '--offline'], scratch);
    expect(published.status, published.stderr).toBe(0);
    expect(`${published.stdout}${published.stderr}`).toContain(`durable-agent@${pkg.version}`);
    // npm says what it would change in a manifest it finds wrong (a bin path, a repository): nothing here.
    expect(published.stderr).not.toMatch(/auto-corrected|EPRIVATE/);
    expect(JSON.parse(fs.readFileSync(path.join(consumer, 'node_modules', 'durable-agent', 'package.json'), 'utf8')).private).toBeUndefined();
    const checkout = run('npm', ['publish', '--dry-run', '--offline'], REPO);
    expect(checkout.status).not.toBe(0);
    expect(checkout.stderr).toContain('Nothing was published: this checkout is not the package. Run npm run pack, then publish the tarball it writes');
  });
});

/** Typed use of the API under the strict flags: generics, optional options given as undefined, a run handle, types from every entry. */
/** A program's own test, with the test kit from durable-agent/testing. */
const TESTING_CONSUMER = `
import { defineTool, resumeRun, startRun } from 'durable-agent';
import { CrashPoints, endTurnReply, MemoryStore, scriptedModel, SimulatedCrash, toolUseReply } from 'durable-agent/testing';

const echo = defineTool<{ text: string }>({
  name: 'echo',
  description: 'Says it back.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  readOnly: true,
  run: ({ text }) => text,
});
const store = new MemoryStore();
const model = () => scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'echo', input: { text: 'hi' } }]), endTurnReply('from the kit')]);
let crashed = '';
try {
  await startRun({ store, model: model(), tools: [echo], task: 'echo', crashPoints: new CrashPoints('after-save-a:1') });
} catch (error) {
  if (!(error instanceof SimulatedCrash)) throw error;
  crashed = error.label;
}
const result = await resumeRun({ store, model: model(), tools: [echo] });
console.log(\`kit: crashed at \${crashed}, then \${result.status}: \${result.text}\`);
`;

const TYPED_CONSUMER = `
import { defineTool, openRun, startRun } from 'durable-agent';
import type { CrashAction, OpenRunOptions, RunEvent, RunHandle, RunStatus, StartOptions, ToolDefinition } from 'durable-agent';
import { RunExistsError, SimulatedCrash } from 'durable-agent/errors';
import type { ErrorKind } from 'durable-agent/errors';
import { endTurnReply, MemoryStore, scriptedModel, toolUseReply } from 'durable-agent/testing';
import type { PgRunStoreOptions, WorkerOptions } from 'durable-agent/postgres';

const add: ToolDefinition<{ a: number; b: number }> = defineTool<{ a: number; b: number }>({
  name: 'add',
  description: 'Adds two numbers.',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  readOnly: true,
  timeoutMs: undefined,
  run: ({ a, b }) => String(a + b),
  verify: () => ({ happened: true, result: undefined }),
});

const events: RunEvent['type'][] = [];
const options: StartOptions = {
  store: new MemoryStore(),
  model: scriptedModel([toolUseReply([{ id: 'toolu_1', name: 'add', input: { a: 1, b: 2 } }]), endTurnReply('typed ok')], { name: undefined }),
  tools: [add],
  task: 'add',
  crashAfter: process.env['NOT_SET'],
  onCrash: undefined,
  maxTurns: undefined,
  maxTokens: undefined,
  system: undefined,
  signal: undefined,
  observer: (event) => void events.push(event.type),
};
const result = await startRun(options);
console.log(result.status, result.text);
const handle: RunHandle = openRun({ store: options.store });
const status: RunStatus = await handle.status();
console.log(\`ledger \${status.ledgerEntries}, state \${status.state}\`);

const exit: CrashAction = 'exit';
const pgOptions: PgRunStoreOptions = { leaseMs: undefined, writeFaults: undefined };
const workerId: WorkerOptions['id'] = undefined;
void [exit, pgOptions, workerId];

const crashed = new MemoryStore();
try {
  await startRun({ ...options, store: crashed, crashAfter: 'after-save-a:1', observer: undefined });
} catch (error) {
  if (error instanceof SimulatedCrash) console.log(\`crash at \${error.label}\`);
  else throw error;
}
const target: OpenRunOptions = { store: crashed };
const byDir: OpenRunOptions = { dir: 'runs/nowhere' };
const history = await openRun(target).history();
const again = await startRun({ ...options, store: crashed, observer: undefined }).catch((error: unknown) => error);
const kind: ErrorKind | null = again instanceof RunExistsError ? again.kind : null;
void byDir;
console.log(\`history \${history.map((step) => step.event).join(' ')}; again: \${kind}\`);
`;

/**
 * A tool typed by its zod 4 schema: run()'s input type is inferred from it (zod's output, the
 * default making units a member). The @ts-expect-error line is why it is here: were the input
 * typed any, the line would compile, the directive would be unused, and tsc would fail.
 */
const ZOD_CONSUMER = `
import { z } from 'zod';
import { defineTool, startRun } from 'durable-agent';
import type { ToolDefinition } from 'durable-agent';
import { endTurnReply, MemoryStore, scriptedModel, toolUseReply } from 'durable-agent/testing';

const ran: string[] = [];
const weather = defineTool({
  name: 'weather',
  description: 'The weather in a city.',
  inputSchema: z.object({ city: z.string().min(1), units: z.enum(['c', 'f']).default('c') }),
  readOnly: true,
  run: (input) => {
    const units: 'c' | 'f' = input.units;
    // @ts-expect-error: the schema has no country
    const country: string = input.country;
    void country;
    ran.push(\`\${input.city}/\${units}\`);
    return \`\${input.city}: 21°\${units}\`;
  },
});
const typed: ToolDefinition<{ city: string; units: 'c' | 'f' }> = weather;

const store = new MemoryStore();
const model = scriptedModel([
  toolUseReply([{ id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } }, { id: 'toolu_2', name: 'weather', input: { city: '' } }]),
  endTurnReply('zod ok'),
]);
const refused: string[] = [];
const result = await startRun({
  store,
  model,
  tools: [typed],
  task: 'weather',
  observer: (event) => {
    if (event.type !== 'tool-finished' || !event.outcome.is_error) return;
    refused.push(\`\${event.call.id} (\${String(event.outcome.content).replace(/^Invalid input for weather: (.*)\\. The tool was not run.*$/, '$1')})\`);
  },
});
console.log(\`zod: \${result.status}, ran with \${ran.join(' ')}, refused \${refused.join(' ')}, sent \${JSON.stringify({ required: weather.inputSchema['required'] })}\`);
`;

/** durable-agent/client under the strict flags, over a fetch of its own (no server): a start, a run followed to its end, an error answer. */
const CLIENT_CONSUMER = `
import { ApiError, createClient } from 'durable-agent/client';
import type { ApiRun, FetchLike, RunEvent, StartRunAnswer } from 'durable-agent/client';
import { ApiError as CatalogApiError } from 'durable-agent/errors';

const events = [
  { type: 'state', seq: 1, at: 1, state: 'awaitingModel', turn: 1 },
  { type: 'text-delta', text: 'Hel' },
  { type: 'end', seq: 2, state: 'done', category: 'done', result: 'Hello', problem: null },
] satisfies RunEvent[];
const started: ApiRun = {
  runId: 'r1', source: 'folder', state: 'awaitingModel', category: 'running', task: 'invoice', turn: 0, maxTurns: null, tokens: null,
  costUsd: null, updatedAt: null, waitsFor: null, waitingOn: null, agent: null, pausedBy: null, tenant: 'default', result: null, problem: null,
};
const answer = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const fakeFetch: FetchLike = async (url, init) => {
  if (url.endsWith('/events')) {
    const text = events.map((event) => ('seq' in event ? \`id: \${event.seq}\\n\` : '') + \`data: \${JSON.stringify(event)}\\n\\n\`).join('');
    return new Response(text, { headers: { 'content-type': 'text/event-stream' } });
  }
  if (url.endsWith('/v1/runs') && init.method === 'POST') return answer(201, { run: started, created: true } satisfies StartRunAnswer);
  return answer(404, { error: { code: 'not-found', message: 'No run r9.' } });
};

const client = createClient({ baseUrl: 'http://api.invalid', token: process.env['NOT_SET'], fetch: fakeFetch, retry: undefined });
const start = await client.startRun({ agent: 'billing', task: 'invoice' }, { idempotencyKey: undefined });
const types: string[] = [];
for await (const event of client.followRun(start.run.runId, { after: undefined, signal: undefined, onDelta: undefined })) types.push(event.type);
const missing = await client.getRun('r9').catch((error: unknown) => error);
const said = missing instanceof ApiError ? \`\${missing.status} \${missing.code}\` : 'no error';
console.log(\`client: created \${start.created}, events \${types.join(' ')}, \${said}, one ApiError class: \${ApiError === CatalogApiError}\`);
`;
