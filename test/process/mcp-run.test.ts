/**
 * `durable-agent run --mcp-config`: the real CLI, the real Anthropic SDK against the fake API,
 * a stdio MCP server and a Streamable HTTP one. The tools join the file tools; the config's
 * secrets reach neither the journal nor a printed line; a bad config is refused (exit 2).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { FileStore } from '../../src/store/file-store.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { effectsOf, readEffects } from '../helpers/mcp-servers.ts';
import { mcpRunSetup, MODEL, RESUME, TASK, toolResultSent } from '../helpers/mcp-run.ts';
import { tempDir } from '../helpers/temp-dir.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('run --mcp-config', () => {
  it('offers the MCP tools next to the file tools, runs them, and pins names, schemas and annotations (no secrets) in the header', async () => {
    const secret = 'mcp-env-secret-value-0123456789';
    const token = 'mcp-header-token-abcdefghijkl';
    const setup = await mcpRunSetup({ secret, token });
    try {
      const run = await setup.run([...TASK, '--verbose']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('[done] All four done.');
      const offered = setup.model.requests[0]!.body.tools!.map((t) => t.name);
      expect(offered.slice(0, 3)).toEqual(['list_files', 'read_file', 'write_file']);
      expect(offered).toEqual(expect.arrayContaining(['mcp__local__append_line', 'mcp__api__set_value', 'mcp__local__bump', 'mcp__api__lookup']));
      expect(effectsOf(setup.effects, 'append_line')).toHaveLength(1);
      expect(effectsOf(setup.effects, 'set_value')).toHaveLength(1);
      expect(effectsOf(setup.effects, 'bump')).toHaveLength(1);
      expect(toolResultSent(setup.model, 'toolu_04')).toMatchObject({ content: [{ type: 'text', text: 'k=v' }] });

      const loaded = await new FileStore(path.join(setup.dir, '.durable-agent')).load();
      const pinned = loaded.header.startedBy!;
      expect(pinned.toolAnnotations!['mcp__api__set_value']).toEqual({
        readOnly: false,
        idempotent: true,
        hints: { destructiveHint: true, idempotentHint: true, readOnlyHint: false },
      });
      expect(pinned.toolAnnotations!['mcp__local__bump']).toEqual({ readOnly: false, idempotent: false });
      const page = path.join(tempDir(), 'viz.html');
      expect((await runCliAsync(['viz', '--out', page], { cwd: setup.dir })).code).toBe(0);
      const history = await runCliAsync(['history', '--json'], { cwd: setup.dir });
      const journalText = fs.readFileSync(path.join(setup.dir, '.durable-agent', 'journal.jsonl'), 'utf8');
      const everything = [journalText, run.stdout, run.stderr, fs.readFileSync(page, 'utf8'), history.stdout].join('\n');
      for (const value of [secret, token]) expect(everything).not.toContain(value);
    } finally {
      await setup.stop();
    }
  });

  it('stops its stdio servers when it exits early (a simulated crash), and a server whose client was SIGKILLed exits with its stdin', async () => {
    const setup = await mcpRunSetup();
    try {
      const crashed = await setup.run(TASK, { CRASH_AFTER: 'after-save-a:1' });
      expect(crashed.code, crashed.stderr).toBe(137);
      const [first] = readEffects(setup.effects).filter((e) => e.event === 'started' && e.pid !== setup.http.child.pid);
      await vi.waitFor(() => expect(alive(first!.pid), 'the first server process is gone').toBe(false), { timeout: 30_000, interval: 50 });

      const killed = await setup.run(['run', '--resume'], { CRASH_AFTER: 'after-save-a:2', CRASH_MODE: 'sigkill' });
      expect(killed.signal).toBe('SIGKILL');
      const second = readEffects(setup.effects).filter((e) => e.event === 'started' && e.pid !== setup.http.child.pid && e.pid !== first!.pid);
      expect(second).toHaveLength(1);
      await vi.waitFor(() => expect(alive(second[0]!.pid), 'the second server process is gone').toBe(false), { timeout: 30_000, interval: 50 });
    } finally {
      await setup.stop();
    }
  });

  it('a config that is not right is refused with exit 2, naming the file and the field; nothing is started', async () => {
    const dir = tempDir();
    const cases: Array<[unknown, string]> = [
      [{ servers: {} }, 'mcpServers is missing'],
      [{ mcpServers: { fs: { command: 'x', args: ['a', 3] } } }, 'mcpServers.fs.args[1] must be a string (it is a number)'],
      [{ mcpServers: { api: { type: 'http', url: 'ftp://x' } } }, 'mcpServers.api.url must be an http: or https: URL'],
      [{ mcpServers: { api: { type: 'sse', url: 'http://x' } } }, 'mcpServers.api.type is "sse": the SSE transport is deprecated'],
      [{ mcpServers: { 'a.b': { command: 'x' } } }, 'mcpServers.a.b has a name that cannot be part of a tool name'],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${VAR} reference, as a config file holds it
      [{ mcpServers: { fs: { command: 'x', env: { TOKEN: '${NOT_SET_ANYWHERE_XYZ}' } } } }, 'mcpServers.fs.env.TOKEN uses ${NOT_SET_ANYWHERE_XYZ}, which is not set'],
      [{ mcpServers: { fs: { command: 'x', reconcile: { t: { readOnly: true } } } } }, 'mcpServers.fs.reconcile.t.readOnly is not a reconcile setting'],
    ];
    for (const [config, words] of cases) {
      const file = path.join(tempDir(), '.mcp.json');
      fs.writeFileSync(file, JSON.stringify(config));
      const run = await runCliAsync(['run', '--task', 'x', '--model', MODEL, '--mcp-config', file], { cwd: dir, env: { ANTHROPIC_API_KEY: 'k' } });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(`${file}: ${words}`);
      expect(fs.existsSync(path.join(dir, '.durable-agent'))).toBe(false);
    }
    const notJson = path.join(tempDir(), 'bad.json');
    fs.writeFileSync(notJson, '{"mcpServers": ');
    const syntax = await runCliAsync(['run', '--task', 'x', '--model', MODEL, '--mcp-config', notJson], { cwd: dir, env: { ANTHROPIC_API_KEY: 'k' } });
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toContain(`${notJson} is not valid JSON`);
    const missing = await runCliAsync(['run', '--task', 'x', '--model', MODEL, '--mcp-config', 'nope.json'], { cwd: dir, env: { ANTHROPIC_API_KEY: 'k' } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('the file cannot be read (ENOENT)');
  });

  it('a server that does not start, or a verify tool that is not read-only, is refused with exit 2', async () => {
    const dir = tempDir();
    const file = path.join(tempDir(), '.mcp.json');
    // It prints its secret on the way out: our message quotes its stderr, never the secret.
    const secret = 'broken-server-secret-0123456789';
    const script = 'console.error("cannot start with token " + process.env.TOKEN); process.exit(3)';
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${VAR} reference, as a config file holds it
    fs.writeFileSync(file, JSON.stringify({ mcpServers: { broken: { command: process.execPath, args: ['-e', script], env: { TOKEN: '${SECRET_FOR_TEST}' } } } }));
    const run = await runCliAsync(['run', '--task', 'x', '--model', MODEL, '--mcp-config', file], { cwd: dir, env: { ANTHROPIC_API_KEY: 'k', SECRET_FOR_TEST: secret } });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('MCP server "broken" could not be used');
    expect(run.stderr).toContain('cannot start with token [redacted]');
    expect(run.stderr).not.toContain(secret);

    const setup = await mcpRunSetup();
    try {
      const config = JSON.parse(fs.readFileSync(setup.config, 'utf8'));
      config.mcpServers.local.reconcile = { append_line: { verify: 'bump' } };
      fs.writeFileSync(setup.config, JSON.stringify(config));
      const refused = await setup.run(TASK);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('mcpServers.local.reconcile.append_line.verify names "bump", which is not read-only');
    } finally {
      await setup.stop();
    }
  });
  it('--require-approval names an MCP tool like any other: the run stops before it (exit 7), approve lets it run once', async () => {
    const setup = await mcpRunSetup();
    try {
      const waiting = await setup.run([...TASK, '--require-approval', 'mcp__local__bump', '--no-wait']);
      expect(waiting.code, waiting.stderr).toBe(7);
      expect(waiting.stdout).toContain('[approval] toolu_03 mcp__local__bump waits for a decision');
      expect(effectsOf(setup.effects, 'bump')).toHaveLength(0);
      expect(effectsOf(setup.effects, 'append_line')).toHaveLength(1);

      const approved = await runCliAsync(['approve', 'toolu_03', '--note', 'fine'], { cwd: setup.dir });
      expect(approved.code, approved.stderr).toBe(0);
      const resumed = await setup.run([...RESUME, '--require-approval', 'mcp__local__bump', '--no-wait']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain('[done] All four done.');
      expect(effectsOf(setup.effects, 'bump')).toHaveLength(1);
      expect(effectsOf(setup.effects, 'append_line')).toHaveLength(1);
    } finally {
      await setup.stop();
    }
  });
});
