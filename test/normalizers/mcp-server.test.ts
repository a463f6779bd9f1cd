/**
 * The MCP server and annotations a call records: read off MCP spans only, filled from an inner
 * span of the same call, and from tool listings in the trace. The main paths run on captured
 * spans (test/evaluate/mcp-fixtures.test.ts); these are the edges no SDK produces on demand.
 */
import { describe, expect, it } from 'vitest';
import { mergeMcpServer, readMcpServer } from '../../src/normalizers/mcp-server.js';
import { callOf, trajectoryOf } from '../helpers/fixtures.js';
import { spanRecord, toolSpan } from '../helpers/spans.js';

const MCP = { 'mcp.method.name': 'tools/call' };

describe('readMcpServer', () => {
  it('takes the conventions’ keys, a port written as text too, and leaves out what is blank or not a port', () => {
    expect(
      readMcpServer({
        'mcp.server.name': ' github ',
        'server.address': 'api.github.com',
        'server.port': '443',
        'network.transport': 'tcp',
        'mcp.session.id': 's-1',
      }),
    ).toEqual({ name: 'github', address: 'api.github.com', port: 443, transport: 'tcp', sessionId: 's-1' });
    expect(readMcpServer({ 'server.address': '  ', 'server.port': -1 })).toEqual({});
    expect(readMcpServer({ 'server.port': 'https' })).toEqual({});
  });

  it('mergeMcpServer fills only what the outer span did not say; a port comes with its address', () => {
    expect(mergeMcpServer(undefined, { name: 'a' })).toEqual({ name: 'a' });
    expect(mergeMcpServer({ name: 'a' }, undefined)).toEqual({ name: 'a' });
    expect(
      mergeMcpServer({ address: 'x', port: 1 }, { name: 'b', address: 'y', port: 2, sessionId: 's' }),
    ).toEqual({
      name: 'b',
      address: 'x',
      port: 1,
      sessionId: 's',
    });
  });
});

describe('the server on a call', () => {
  it('an MCP tools/call span gives its call a server; a plain execute_tool span none', () => {
    const trajectory = trajectoryOf([
      toolSpan('list_repos', { extra: { ...MCP, 'server.address': 'localhost', 'server.port': 8931 } }),
      toolSpan('get_weather', { start: 5, extra: { 'server.address': 'api.weather.example' } }),
    ]);
    expect(callOf(trajectory, 'list_repos').mcpServer).toEqual({ address: 'localhost', port: 8931 });
    // server.address on a span that is not an MCP span is some other server (an HTTP API, a model).
    expect(callOf(trajectory, 'get_weather').mcpServer).toBeUndefined();
  });

  it('the client span nested in the framework’s tool span is the same call, and gives it the server', () => {
    const outer = toolSpan('delete_repo', { callId: 'c1', start: 0, end: 10 });
    const inner = spanRecord({
      name: 'tools/call delete_repo',
      kind: 'client',
      parentSpanId: outer.spanId,
      start: 1,
      end: 9,
      attributes: {
        ...MCP,
        'gen_ai.tool.name': 'delete_repo',
        'server.address': '127.0.0.1',
        'mcp.session.id': 's-9',
      },
    });
    const trajectory = trajectoryOf([outer, inner]);
    expect(trajectory.calls).toHaveLength(1);
    expect(trajectory.calls[0]?.mcpServer).toEqual({ address: '127.0.0.1', sessionId: 's-9' });
  });
});

describe('tool listings in the trace', () => {
  it('an OpenAI Agents SDK mcp_tools span (OpenInference) marks the listed tools’ calls as MCP calls', () => {
    const trajectory = trajectoryOf([
      spanRecord({
        name: 'mcp_tools',
        attributes: { 'openinference.span.kind': 'TOOL', 'output.value': '["roll","flip"]' },
      }),
      toolSpan('roll', { start: 2 }),
      toolSpan('local_math', { start: 4 }),
    ]);
    expect(callOf(trajectory, 'roll').mcpServer).toEqual({});
    expect(callOf(trajectory, 'local_math').mcpServer).toBeUndefined();
  });

  it('logfire’s MCP tools/list response gives the listed tools their annotations; a bad response lists nothing', () => {
    const listing = (response: string) =>
      spanRecord({
        name: 'MCP request: tools/list',
        scope: { name: 'logfire.mcp' },
        attributes: { 'rpc.method': 'tools/list', response },
      });
    const response = JSON.stringify({
      tools: [
        {
          name: 'drop_table',
          annotations: { destructiveHint: true, readOnlyHint: false, title: 'Drop', other: 1 },
        },
        { name: 'select', annotations: null },
        { annotations: { destructiveHint: true } },
      ],
    });
    const trajectory = trajectoryOf([
      listing(response),
      toolSpan('drop_table', { start: 2 }),
      toolSpan('select', { start: 4 }),
    ]);
    expect(callOf(trajectory, 'drop_table').mcpAnnotations).toEqual({
      destructiveHint: true,
      readOnlyHint: false,
      title: 'Drop',
    });
    expect(callOf(trajectory, 'select')).toMatchObject({ mcpServer: {} });
    expect(callOf(trajectory, 'select').mcpAnnotations).toBeUndefined();

    const broken = trajectoryOf([listing('{"tools": [truncated'), toolSpan('drop_table', { start: 2 })]);
    expect(callOf(broken, 'drop_table').mcpServer).toBeUndefined();
  });
});
