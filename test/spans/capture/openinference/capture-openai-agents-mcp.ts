/**
 * Captures OpenInference spans from @openai/agents (JS) calling tools of an MCP server: the SDK's
 * own MCPServerStreamableHttp (on the MCP TypeScript client) against the mock `repo-tools` server
 * on loopback HTTP (../mock-mcp-server.ts), the model a scripted one (no network, no key), the
 * spans through @arizeai/openinference-instrumentation-openai-agents. The bridge records the SDK's
 * `mcp_tools` span (the tool names the server listed) but not the server's name (`mcp_data`).
 *
 *   openinference-openai-agents-mcp.otlp.json   list_repos, then delete_repo
 *
 * Run from the repository root (the root's node_modules hold the same versions as this folder's
 * package.json): npx tsx test/spans/capture/openinference/capture-openai-agents-mcp.ts
 */
import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import * as agents from '@openai/agents';
import {
  Agent,
  MCPServerStreamableHttp,
  Runner,
  setTracingDisabled,
  Usage,
  withGenerationSpan,
} from '@openai/agents';
import { listen, mockMcpServer, REPO_TOOLS } from '../mock-mcp-server.js';
import { setupOtel, writeFixture } from './lib/otel.mjs';

// agents-core turns tracing off by default when NODE_ENV=test.
delete process.env.NODE_ENV;
delete process.env.OPENAI_AGENTS_DISABLE_TRACING;
delete process.env.OPENAI_API_KEY;

const otel = setupOtel();
const instrumentation = new OpenAIAgentsInstrumentation({ tracerProvider: otel.provider });
instrumentation.manuallyInstrument(agents);
setTracingDisabled(false);

type Turn = { calls: { id: string; name: string; args: Record<string, unknown> }[] } | { text: string };
const SCRIPT: Turn[] = [
  { calls: [{ id: 'call_list', name: 'list_repos', args: { owner: 'acme' } }] },
  { calls: [{ id: 'call_delete', name: 'delete_repo', args: { repo: 'acme/old-site' } }] },
  { text: 'Deleted acme/old-site.' },
];

/** A scripted Model: each turn's output items, in a generation span as model providers do. */
class ScriptedModel {
  turn = 0;
  async getResponse(request: { input: unknown }) {
    const index = this.turn++;
    const turn = SCRIPT[index];
    if (!turn) throw new Error(`script exhausted at turn ${index}`);
    return withGenerationSpan(async (span) => {
      span.spanData.model = 'scripted-model';
      span.spanData.input =
        typeof request.input === 'string'
          ? [{ role: 'user', content: request.input }]
          : (request.input as never);
      const output =
        'calls' in turn
          ? turn.calls.map((call) => ({
              type: 'function_call' as const,
              id: `fc_${index}`,
              callId: call.id,
              name: call.name,
              arguments: JSON.stringify(call.args),
              status: 'completed' as const,
            }))
          : [
              {
                type: 'message' as const,
                id: `msg_${index}`,
                role: 'assistant' as const,
                status: 'completed' as const,
                content: [{ type: 'output_text' as const, text: turn.text }],
              },
            ];
      span.spanData.output = output as never;
      return {
        usage: new Usage({ requests: 1, inputTokens: 100, outputTokens: 20, totalTokens: 120 }),
        output,
        responseId: `resp_scripted_${index}`,
      };
    });
  }
  // biome-ignore lint/correctness/useYield: the captures run non-streamed.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not streamed');
  }
}

const server = mockMcpServer('repo-tools', REPO_TOOLS);
const url = await listen(server, '127.0.0.1');
const mcp = new MCPServerStreamableHttp({ url: url.href, name: 'repo-tools' });
await mcp.connect();
const agent = new Agent({
  name: 'repo-agent',
  instructions: 'Clean up old repositories.',
  model: new ScriptedModel() as never,
  mcpServers: [mcp],
});
const result = await new Runner({ workflowName: 'repo cleanup' }).run(agent, 'Delete acme/old-site.', {
  maxTurns: 5,
});
console.log('final output:', result.finalOutput);
await mcp.close();
server.close();
await writeFixture(otel, 'openinference-openai-agents-mcp.otlp.json', { expectSpans: 5 });
await otel.provider.shutdown();
