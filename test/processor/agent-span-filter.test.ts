import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONVENTIONS } from '../../src/normalizers/conventions.js';
import { mayBeAgentSpan } from '../../src/processor/agent-span-filter.js';
import { fixture } from '../helpers/fixtures.js';

const files = readdirSync(new URL('../spans/', import.meta.url)).filter((file) =>
  file.endsWith('.otlp.json'),
);

describe('mayBeAgentSpan (the fast path)', () => {
  it('never passes over a span some convention claims, in any captured fixture', () => {
    let claimed = 0;
    for (const file of files) {
      for (const span of fixture(file)) {
        if (!CONVENTIONS.some((convention) => convention.read(span) !== undefined)) continue;
        claimed++;
        expect(mayBeAgentSpan(span.name, span.scope.name, span.attributes), `${file}: ${span.name}`).toBe(
          true,
        );
      }
    }
    expect(claimed).toBeGreaterThan(200);
  });

  it('keeps the MCP tool listings whose results give tools their annotations', () => {
    const listing = { 'rpc.method': 'tools/list', response: '{"tools":[]}' };
    expect(mayBeAgentSpan('MCP request: tools/list', 'logfire.mcp', listing)).toBe(true);
    expect(
      mayBeAgentSpan('mcp_tools', '@arizeai/openinference-instrumentation-openai-agents', {
        'openinference.span.kind': 'TOOL',
      }),
    ).toBe(true);
  });

  it('passes ordinary HTTP, database and messaging spans straight on', () => {
    const ordinary: [string, string, Record<string, unknown>][] = [
      [
        'GET /orders/:id',
        '@opentelemetry/instrumentation-http',
        { 'http.request.method': 'GET', 'url.path': '/orders/1' },
      ],
      [
        'SELECT orders',
        '@opentelemetry/instrumentation-pg',
        { 'db.system.name': 'postgresql', 'db.query.text': 'SELECT 1' },
      ],
      ['publish refunds', '@opentelemetry/instrumentation-kafkajs', { 'messaging.system': 'kafka' }],
      ['chat room join', 'app', { 'app.room': 'general' }],
    ];
    for (const [name, scope, attributes] of ordinary)
      expect(mayBeAgentSpan(name, scope, attributes), name).toBe(false);
  });
});
