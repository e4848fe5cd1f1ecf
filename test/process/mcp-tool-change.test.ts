/**
 * A resume against a server whose tool list changed since the run started (a schema changed,
 * annotations changed, a tool gone): refused without --allow-tool-change (exit 2, the journal
 * untouched), and with it the open call to the changed tool is not made with the new contract:
 * the model is told, with an is_error result, and the user on stderr.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endTurnReply, toolUseReply } from '../../src/model/scripted-model.ts';
import { runCliAsync } from '../helpers/cli.ts';
import { effectsOf, startHttpServer } from '../helpers/mcp-servers.ts';
import { mcpRunSetup, RESUME, TASK, toolResultSent } from '../helpers/mcp-run.ts';

describe('a resume against a server whose tools changed', () => {
  it('is refused without --allow-tool-change; with it, the open call to the changed tool gets an is_error result and is not made', async () => {
    const setup = await mcpRunSetup({
      script: [toolUseReply([{ id: 'toolu_01', name: 'mcp__api__set_value', input: { key: 'k', value: 'v' } }]), endTurnReply('Understood.')],
    });
    const port = Number(new URL(setup.http.url).port);
    let changed: Awaited<ReturnType<typeof startHttpServer>> | null = null;
    try {
      const killed = await setup.run(TASK, { CRASH_AFTER: 'after-save-a:1', CRASH_MODE: 'sigkill' });
      expect(killed.signal).toBe('SIGKILL');
      await setup.http.stop();
      changed = await startHttpServer(setup.effects, { port, env: { MCP_TEST_VARIANT: 'changed' } });
      const journal = path.join(setup.dir, '.durable-agent', 'journal.jsonl');
      const before = fs.readFileSync(journal);

      const refused = await setup.run(RESUME);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('tool mcp__api__bump is not offered now');
      expect(refused.stderr).toContain('the input schema of tool mcp__api__set_value changed');
      expect(refused.stderr).toContain(
        'the annotations of tool mcp__api__lookup changed (read-only {readOnlyHint: true} then, side effect {destructiveHint: true, readOnlyHint: false} now)',
      );
      expect(refused.stderr).toContain('--allow-tool-change');
      expect(refused.stderr).toContain('with the same --dir and --mcp-config');
      expect(fs.readFileSync(journal)).toEqual(before);

      const resumed = await setup.run([...RESUME, '--allow-tool-change', '--plain']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('[resume] going on with --allow-tool-change although the input schema of tool mcp__api__set_value changed');
      expect(resumed.stdout).toContain('[resume][reconcile] tool_use_id=toolu_01 name=mcp__api__set_value ledger miss with side effects, unresolvable, appending is_error');
      const result = toolResultSent(setup.model, 'toolu_01');
      expect(result).toMatchObject({ is_error: true });
      expect(JSON.stringify(result)).toContain('changed since this call was made (the input schema of tool mcp__api__set_value changed)');
      expect(effectsOf(setup.effects, 'set_value')).toHaveLength(0);
      // The model is offered the tools as they are now.
      const offered = setup.model.requests.at(-1)!.body.tools!.map((t) => t.name);
      expect(offered).not.toContain('mcp__api__bump');
      expect(setup.model.requests.at(-1)!.body.tools!.find((t) => t.name === 'mcp__api__set_value')!.input_schema).toMatchObject({ required: ['key', 'value', 'ttl'] });
      expect((await runCliAsync(['history'], { cwd: setup.dir })).stdout).toContain('unknown-reported toolu_01 (rule tool-changed)');
    } finally {
      await changed?.stop();
      await setup.stop();
    }
  });
});
