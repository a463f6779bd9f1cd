/**
 * Mock MCP servers for the capture scripts, as the mock models stand in for an LLM: JSON-RPC over
 * Streamable HTTP on loopback (one JSON response per POST, a session id on every response),
 * answering `initialize`, `tools/list` (with each tool's annotations) and `tools/call` (a fixed
 * result per tool). Real MCP clients (the MCP TypeScript SDK, the OpenAI Agents SDK's
 * MCPServerStreamableHttp) talk to them as to any server.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A tool a mock server offers. */
export interface MockTool {
  name: string;
  description: string;
  annotations: { [key: string]: boolean };
  result: Json;
}

/** A mock MCP server: JSON-RPC over Streamable HTTP (one JSON response per POST). */
export function mockMcpServer(name: string, tools: MockTool[]): Server {
  const session = randomUUID();
  return createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST') {
        response.writeHead(405).end();
        return;
      }
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id?: number;
        method: string;
        params?: { [key: string]: Json };
      };
      if (message.id === undefined) {
        response.writeHead(202).end();
        return;
      }
      let result: Json;
      if (message.method === 'initialize') {
        result = {
          protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name, version: '1.0.0' },
        };
      } else if (message.method === 'tools/list') {
        result = {
          tools: tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            inputSchema: { type: 'object' },
            annotations: tool.annotations,
          })),
        };
      } else if (message.method === 'tools/call') {
        const tool = tools.find((candidate) => candidate.name === message.params?.name);
        result = { content: [{ type: 'text', text: JSON.stringify(tool?.result ?? null) }], isError: !tool };
      } else {
        result = {};
      }
      response.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': session });
      response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    });
  });
}

export const REPO_TOOLS: MockTool[] = [
  {
    name: 'list_repos',
    description: 'List the repositories of an owner.',
    annotations: { readOnlyHint: true },
    result: { repos: ['acme/site', 'acme/old-site'] },
  },
  {
    name: 'delete_repo',
    description: 'Delete a repository.',
    annotations: { readOnlyHint: false, destructiveHint: true },
    result: { deleted: 'acme/old-site' },
  },
];
export const SHELL_TOOLS: MockTool[] = [
  {
    name: 'run_command',
    description: 'Run a shell command.',
    annotations: { destructiveHint: true, openWorldHint: true },
    result: { exitCode: 0, stdout: 'ok' },
  },
];

/** Listens on an ephemeral port of `host`; the server's MCP endpoint URL. */
export async function listen(server: Server, host: string): Promise<URL> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return new URL(`http://${host}:${(server.address() as AddressInfo).port}/mcp`);
}
