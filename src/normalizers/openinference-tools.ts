/** The tools an OpenInference LLM span says its agent has, for reading a code action (code-actions.ts). */
import { isJsonObject, type JsonValue } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import { capturedJson } from './attributes.js';
import { declaredFunctions } from './code-actions.js';

const INPUT_MESSAGES = 'llm.input_messages';

/**
 * The tools the turn's agent has: those it lists (`llm.tools.N.tool.json_schema`) and those its
 * input messages declare as Python stubs (a code agent's prompt). Read only for a code action.
 */
export function toolsOf(span: SpanRecord): Set<string> {
  const tools = new Set<string>();
  const texts: string[] = [];
  for (const [key, value] of Object.entries(span.attributes)) {
    if (typeof value !== 'string') continue;
    if (key.startsWith(TOOL_LIST_PREFIX) && key.endsWith(TOOL_SCHEMA_SUFFIX)) {
      const schema = capturedJson(value);
      const name = schema.captured && schema.parseError === undefined ? toolNameOf(schema.value) : undefined;
      if (name !== undefined) tools.add(name);
    } else if (key.startsWith(INPUT_MESSAGES)) texts.push(value);
  }
  return declaredFunctions(texts, tools);
}

const TOOL_LIST_PREFIX = 'llm.tools.';
const TOOL_SCHEMA_SUFFIX = '.tool.json_schema';

/** The name in a tool schema: `{type: "function", function: {name}}` or `{name}`. */
function toolNameOf(schema: JsonValue): string | undefined {
  if (!isJsonObject(schema)) return undefined;
  const inner = isJsonObject(schema.function) ? schema.function : schema;
  return typeof inner.name === 'string' ? inner.name : undefined;
}
