/**
 * The fast path's test: could any convention claim this span? Looks only at the span's name,
 * scope name and attribute keys (no values parsed, nothing allocated), so ordinary HTTP and
 * database spans are passed on at once. It may say yes to a span no convention claims (the span
 * is then buffered for nothing); it must never say no to one a convention claims: a test holds
 * it to that over every captured fixture.
 */

/** Attribute key prefixes of the agent conventions (GenAI, Vercel `ai.*`, OpenInference, OpenLLMetry, ...). */
const KEY_PREFIXES = [
  'gen_ai.',
  'ai.',
  'llm.',
  'openinference.',
  'traceloop.',
  'langsmith.',
  'langfuse.',
  'gcp.vertex.agent.',
  'mastra.',
  'mcp.',
  'pydantic_ai.',
] as const;
/** Keys that identify a convention without a prefix (pydantic-ai's older spans). */
const BARE_KEYS = new Set(['tool_arguments', 'tool_response', 'agent_name', 'model_request_parameters']);
/**
 * Instrumentation scopes whose every span is read by a convention, or by the reading of MCP tool
 * listings (logfire's MCP spans: their `tools/list` results give the tools' annotations).
 */
const SCOPES = new Set(['pydantic-ai', 'gcp.vertex.agent', 'logfire.openai_agents', 'logfire.mcp']);
/** Span names that mark an agent span even without attributes. */
const NAME_PREFIXES = [
  'ai.',
  'execute_tool',
  'invoke_agent',
  'running tool',
  'running output function',
  'call_llm',
];

/** The prefixes by their first character: one comparison rules out most keys of ordinary spans. */
const PREFIXES_BY_FIRST = new Map<number, string[]>();
for (const key of BARE_KEYS) PREFIXES_BY_FIRST.set(key.charCodeAt(0), []);
for (const prefix of KEY_PREFIXES) {
  const first = prefix.charCodeAt(0);
  PREFIXES_BY_FIRST.set(first, [...(PREFIXES_BY_FIRST.get(first) ?? []), prefix]);
}

/** True when some convention might claim a span with this name, scope and attributes. */
export function mayBeAgentSpan(
  name: string,
  scopeName: string,
  attributes: Readonly<Record<string, unknown>>,
): boolean {
  for (const key in attributes) {
    const prefixes = PREFIXES_BY_FIRST.get(key.charCodeAt(0));
    if (prefixes === undefined) continue;
    for (const prefix of prefixes) if (key.startsWith(prefix)) return true;
    if (BARE_KEYS.has(key)) return true;
  }
  if (SCOPES.has(scopeName)) return true;
  for (const prefix of NAME_PREFIXES) if (name.startsWith(prefix)) return true;
  return false;
}
