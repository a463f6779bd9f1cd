/**
 * The MCP server of a call, from the OTel MCP conventions' attributes on an MCP span
 * (`tools/call {tool}`, `mcp.method.name`): `server.address`, `server.port`, `network.transport`,
 * `mcp.session.id`, and `mcp.server.name` where an instrumentation adds it (Sentry's MCP
 * integration does). Read on MCP spans only: a `chat` span's `server.address` is the model's host.
 */
import type { Attributes } from '../model/span-record.js';
import type { McpServer } from '../model/trajectory.js';
import { stringAttribute } from './attributes.js';

/** Attribute keys of the MCP conventions that name the server a request went to. */
export const MCP_SERVER_KEYS = {
  name: 'mcp.server.name',
  address: 'server.address',
  port: 'server.port',
  transport: 'network.transport',
  sessionId: 'mcp.session.id',
} as const;

/** The server an MCP span names; `{}` when it names none (the call still went to an MCP server). */
export function readMcpServer(attributes: Attributes): McpServer {
  const server: McpServer = {};
  const name = stringAttribute(attributes, MCP_SERVER_KEYS.name);
  const address = stringAttribute(attributes, MCP_SERVER_KEYS.address);
  const port = attributes[MCP_SERVER_KEYS.port];
  const transport = stringAttribute(attributes, MCP_SERVER_KEYS.transport);
  const sessionId = stringAttribute(attributes, MCP_SERVER_KEYS.sessionId);
  if (name) server.name = name;
  if (address) server.address = address;
  // Integers arrive as numbers, or as strings from some exporters (OTLP JSON's intValue).
  const portNumber = typeof port === 'string' ? Number(port) : port;
  if (typeof portNumber === 'number' && Number.isInteger(portNumber) && portNumber > 0)
    server.port = portNumber;
  if (transport) server.transport = transport;
  if (sessionId) server.sessionId = sessionId;
  return server;
}

/** What the outer span did not say of the server, filled from an inner span of the same call. */
export function mergeMcpServer(
  outer: McpServer | undefined,
  inner: McpServer | undefined,
): McpServer | undefined {
  if (inner === undefined) return outer;
  if (outer === undefined) return { ...inner };
  if (outer.name === undefined && inner.name !== undefined) outer.name = inner.name;
  if (outer.address === undefined && inner.address !== undefined) {
    outer.address = inner.address;
    if (inner.port !== undefined) outer.port = inner.port;
  }
  if (outer.transport === undefined && inner.transport !== undefined) outer.transport = inner.transport;
  if (outer.sessionId === undefined && inner.sessionId !== undefined) outer.sessionId = inner.sessionId;
  return outer;
}
