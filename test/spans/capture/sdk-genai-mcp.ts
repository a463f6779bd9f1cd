/**
 * Captures agent runs whose tools are on MCP servers, from a real OpenTelemetry SDK
 * (sdk-trace-base 2.x, JsonTraceSerializer) and the real MCP TypeScript client
 * (`@modelcontextprotocol/client`, Streamable HTTP transport) talking to two mock MCP servers on
 * loopback HTTP: `repo-tools` at `localhost` (list_repos, read-only; delete_repo, destructive) and
 * `shell-tools` at `127.0.0.1` (run_command). The MCP SDK records no spans of its own, so the
 * agent loop records them in the OTel MCP conventions' shape: a CLIENT span
 * `tools/call {tool}` per call with `mcp.method.name`, `gen_ai.operation.name=execute_tool`,
 * `gen_ai.tool.name`, `server.address` / `server.port` (the URL the client connected to),
 * `network.transport=tcp`, `mcp.session.id` (the session the server gave) and `jsonrpc.request.id`,
 * inside the framework's `execute_tool` span; a `tools/list` span per server (the conventions
 * record no result, so the tools' annotations are not in the trace). Decisions are
 * `gen_ai.tool.call.decision` events on the agent span, as in sdk-genai-decisions.ts:
 *
 *   sdk-genai-mcp-two-servers.otlp.json          list_repos on repo-tools, run_command on shell-tools
 *   sdk-genai-mcp-delete-unapproved.otlp.json    delete_repo: require_approval never answered, run anyway
 *   sdk-genai-mcp-delete-approved.otlp.json      delete_repo: require_approval, then allow
 *
 * Run from the repository root: npx tsx test/spans/capture/sdk-genai-mcp.ts
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Span, SpanKind } from '@opentelemetry/api';
import { type Decision, genAiRecorder, MODEL, type MockCall, recordDecisions } from './genai-recorder.js';
import { type Json, listen, mockMcpServer, REPO_TOOLS, SHELL_TOOLS } from './mock-mcp-server.js';

const { tracer, converse, record, shutdown } = genAiRecorder(
  'repo-agent-service',
  'repo-agent-framework',
  '0.3.0',
);

interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  url: URL;
}

/** Connects the real MCP client and lists the server's tools, in a `tools/list` span. */
async function connect(url: URL, host: string): Promise<Connected> {
  const transport = new StreamableHTTPClientTransport(url);
  const client = new Client({ name: 'repo-agent', version: '0.3.0' });
  await client.connect(transport);
  await tracer.startActiveSpan('tools/list', { kind: SpanKind.CLIENT }, async (span) => {
    span.setAttributes({ 'mcp.method.name': 'tools/list', ...serverAttributes(transport, url, host) });
    await client.listTools();
    span.end();
  });
  return { client, transport, url };
}

function serverAttributes(transport: StreamableHTTPClientTransport, url: URL, host: string) {
  const attributes: { [key: string]: string | number } = {
    'server.address': host,
    'server.port': Number(url.port),
    'network.transport': 'tcp',
    'network.protocol.name': 'http',
  };
  if (transport.sessionId) attributes['mcp.session.id'] = transport.sessionId;
  return attributes;
}

interface Call extends MockCall {
  server: 'repo' | 'shell';
}

let requestId = 10;

async function execute(agent: Span, call: Call, servers: Record<Call['server'], Connected>): Promise<Json> {
  await recordDecisions(agent, call);
  const { client, transport, url } = servers[call.server];
  const host = url.hostname;
  return tracer.startActiveSpan(`execute_tool ${call.name}`, { kind: SpanKind.INTERNAL }, async (tool) => {
    tool.setAttributes({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.id,
      'gen_ai.tool.type': 'extension',
    });
    const result = await tracer.startActiveSpan(
      `tools/call ${call.name}`,
      { kind: SpanKind.CLIENT },
      async (span) => {
        span.setAttributes({
          'mcp.method.name': 'tools/call',
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': call.name,
          'jsonrpc.request.id': String(requestId++),
          ...serverAttributes(transport, url, host),
        });
        const called = await client.callTool({ name: call.name, arguments: call.arguments });
        span.end();
        return called;
      },
    );
    const text = (result.content as { type: string; text?: string }[])[0]?.text ?? 'null';
    const value = JSON.parse(text) as Json;
    tool.setAttributes({
      'gen_ai.tool.call.arguments': JSON.stringify(call.arguments),
      'gen_ai.tool.call.result': text,
    });
    tool.end();
    return { type: 'tool_call_response', id: call.id, response: value };
  });
}

/** One agent run: connect to both servers, each turn's calls, then a final answer. */
async function run(turns: Call[][], urls: Record<Call['server'], URL>): Promise<void> {
  const attributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.provider.name': 'mock',
    'gen_ai.agent.name': 'repo-agent',
    'gen_ai.request.model': MODEL,
  };
  await tracer.startActiveSpan('invoke_agent repo-agent', { attributes }, async (agent) => {
    const servers = {
      repo: await connect(urls.repo, urls.repo.hostname),
      shell: await connect(urls.shell, urls.shell.hostname),
    };
    await converse('Clean up acme/old-site.', turns, (call) => execute(agent, call, servers));
    await servers.repo.client.close();
    await servers.shell.client.close();
    agent.end();
  });
}

const list: Call = { id: 'call_list', name: 'list_repos', arguments: { owner: 'acme' }, server: 'repo' };
const command: Call = {
  id: 'call_cmd',
  name: 'run_command',
  arguments: { command: 'git gc' },
  server: 'shell',
};
const remove = (decisions: Decision[]): Call => ({
  id: 'call_delete',
  name: 'delete_repo',
  arguments: { repo: 'acme/old-site' },
  server: 'repo',
  decisions,
});

const CASES: Record<string, Call[][]> = {
  'two-servers': [[list], [command]],
  'delete-unapproved': [[list], [remove(['require_approval'])]],
  'delete-approved': [[list], [remove(['require_approval', 'allow'])]],
};

const repoServer = mockMcpServer('repo-tools', REPO_TOOLS);
const shellServer = mockMcpServer('shell-tools', SHELL_TOOLS);
const urls = { repo: await listen(repoServer, 'localhost'), shell: await listen(shellServer, '127.0.0.1') };
for (const [name, turns] of Object.entries(CASES))
  await record(`sdk-genai-mcp-${name}.otlp.json`, () => run(turns, urls));
await shutdown();
repoServer.close();
shellServer.close();
