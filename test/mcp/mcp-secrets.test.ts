/**
 * A secret the MCP config hands a server (its env, expanded from ${VAR}) that comes back in what
 * a tool answers (an error result, a thrown error, a plain result) reaches neither the journal,
 * nor the visualizer's page, nor an exported trace with content.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { checkMcpConfig } from '../../src/mcp/config.ts';
import { mcpTools } from '../../src/mcp/mcp-tools.ts';
import { endTurnReply, scriptedModel, toolUseReply } from '../../src/model/scripted-model.ts';
import { startRun } from '../../src/runtime/run-api.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { vizPage } from '../../visualizer/viz-page.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'mcp-leaky-server.mjs');
// Shaped like nothing real (a committed string that looks like a token would trip secret scanners).
const SECRET = 'leaky-test-only-value-7f3a9c2e';

it('a server secret in a tool error, a thrown error or a result is stored, drawn and exported as [redacted]', async () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${VAR} reference, as a config file holds it
  const config = checkMcpConfig({ mcpServers: { leaky: { command: process.execPath, args: [SERVER], env: { LEAKY_TOKEN: '${LEAKY_SECRET_FOR_TEST}' } } } }, 'test config', {
    LEAKY_SECRET_FOR_TEST: SECRET,
  });
  const set = await mcpTools(config);
  try {
    const dir = tempDir('da-mcp-secrets-');
    const store = new FileStore(path.join(dir, '.durable-agent'));
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const calls = ['error_result', 'throws', 'echoes'].map((name, index) => ({ id: `toolu_${index}`, name: `mcp__leaky__${name}`, input: {} }));
    const result = await startRun({ store, model: scriptedModel([toolUseReply(calls), endTurnReply('done')]), tools: set.tools, task: 'use the server', tracer, traceContent: true });
    expect(result.status).toBe('done');
    store.close();

    const journal = fs.readFileSync(path.join(dir, '.durable-agent', 'journal.jsonl'), 'utf8');
    expect(journal).toContain('failed using token [redacted]');
    expect(journal).toContain('signed in as [redacted]');
    expect(journal).not.toContain(SECRET);
    expect((await vizPage(new FileStore(path.join(dir, '.durable-agent')))).html).not.toContain(SECRET);
    const exported = JSON.stringify(exporter.getFinishedSpans().map((span) => [span.attributes, span.events]));
    expect(exported).toContain('[redacted]');
    expect(exported).not.toContain(SECRET);
  } finally {
    await set.close();
  }
}, 60_000);
