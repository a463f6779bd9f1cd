/**
 * MCP tool listings in a trace: the `tools/list` results some instrumentations record. A call of
 * a tool a listing names went to an MCP server (its `mcpServer` is at least `{}`), and takes the
 * tool's annotations from the listing when it records them. Read from:
 * - logfire's MCP integration (scope `logfire.mcp`): `MCP request: tools/list` with `rpc.method` =
 *   `tools/list` and the result as JSON in `response` (`{"tools": [{"name", "annotations"}]}`);
 * - the OpenAI Agents SDK's `mcp_tools` span: OpenInference's bridge writes its result (the tool
 *   names) to `output.value`; logfire's `MCP: list tools from server {server}` to `result`.
 * The OTel MCP conventions record no result, so their `tools/list` spans list nothing.
 */
import { isJsonObject, type JsonValue } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import type { McpToolAnnotations } from '../model/trajectory.js';
import type { Assembly } from './assembly-nodes.js';
import { parsedJson, stringAttribute } from './attributes.js';

const LOGFIRE_MCP_SCOPE = 'logfire.mcp';
const LIST_TOOLS = 'tools/list';
const AGENTS_LIST_TOOLS = 'mcp_tools';
const LOGFIRE_AGENTS_LIST_TOOLS = 'MCP: list tools from server';
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** Per tool listed: its annotations, when a listing recorded them (the first that did). */
type Listed = Map<string, McpToolAnnotations | undefined>;

/** Marks the calls of listed tools as MCP calls and gives them the listing's annotations. */
export function attachMcpListings(assembly: Assembly): void {
  if (assembly.calls.length === 0) return;
  let listed: Listed | undefined;
  for (const span of assembly.tree.spans) {
    const name = span.name;
    // Most spans are neither: one character or one comparison tells.
    if (name.charCodeAt(0) !== 77 /* M */ && name !== AGENTS_LIST_TOOLS) continue;
    const tools = listingOf(span);
    if (tools === undefined) continue;
    listed ??= new Map();
    for (const [tool, annotations] of tools)
      if (listed.get(tool) === undefined) listed.set(tool, annotations);
  }
  if (listed === undefined) return;
  for (const node of assembly.calls) {
    const draft = node.draft;
    if (!listed.has(draft.tool)) continue;
    draft.mcpServer ??= {};
    const annotations = listed.get(draft.tool);
    if (annotations !== undefined && draft.mcpAnnotations === undefined) draft.mcpAnnotations = annotations;
  }
}

/** The tools a listing span names, each with its annotations when recorded; undefined for other spans. */
function listingOf(span: SpanRecord): [string, McpToolAnnotations | undefined][] | undefined {
  const attributes = span.attributes;
  let value: JsonValue | undefined;
  if (span.scope.name === LOGFIRE_MCP_SCOPE && attributes['rpc.method'] === LIST_TOOLS) {
    const response = attributes.response;
    const parsed = response === undefined ? undefined : parsedJson(response);
    value = isJsonObject(parsed) ? parsed.tools : undefined;
  } else if (
    span.name === AGENTS_LIST_TOOLS &&
    stringAttribute(attributes, 'openinference.span.kind') === 'TOOL'
  ) {
    const output = attributes['output.value'];
    value = output === undefined ? undefined : parsedJson(output);
  } else if (span.name.startsWith(LOGFIRE_AGENTS_LIST_TOOLS)) {
    const result = attributes.result;
    value = result === undefined ? undefined : parsedJson(result);
  }
  if (!Array.isArray(value)) return undefined;
  const tools: [string, McpToolAnnotations | undefined][] = [];
  for (const item of value) {
    if (typeof item === 'string') tools.push([item, undefined]);
    else if (isJsonObject(item) && typeof item.name === 'string')
      tools.push([item.name, annotationsOf(item.annotations)]);
  }
  return tools;
}

/** The hints of an `annotations` object (booleans only, as the MCP schema has them); undefined for none. */
function annotationsOf(value: JsonValue | undefined): McpToolAnnotations | undefined {
  if (!isJsonObject(value)) return undefined;
  const annotations: McpToolAnnotations = {};
  for (const hint of HINTS) {
    const hinted = value[hint];
    if (typeof hinted === 'boolean') annotations[hint] = hinted;
  }
  if (typeof value.title === 'string') annotations.title = value.title;
  return Object.keys(annotations).length === 0 ? undefined : annotations;
}
