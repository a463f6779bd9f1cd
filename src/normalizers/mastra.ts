/**
 * Mastra (`@mastra/otel-exporter`, scope `@mastra/otel-exporter`): Mastra's own spans converted to
 * OTel with GenAI keys and a `mastra.span.type`. Agent runs (`invoke_agent`) and tool calls
 * (`execute_tool {tool}` with `gen_ai.tool.call.{id,arguments,result}`, `error.type` /
 * `error.message`, status ERROR + exception event) are plain GenAI and left to that convention.
 *
 * What GenAI gets wrong is the turn. Each model call is an `agent_step` span
 * (`mastra.span.type=model_step`) whose children are a `chat {model}` span and the tool spans.
 * The exporter builds the chat span's `gen_ai.output.messages` from the output's text only, so
 * the tool calls the model asked for never appear there, and it sets no input messages; read as
 * GenAI, no turn asks for anything and every tool call is left without an issuing turn. The step
 * span has them: `mastra.model_step.output` = `{"text", "toolCalls": [{toolCallId, toolName, args}]}`
 * (`text` is what the model wrote, `""` on a step that only asked for tools).
 *
 * Keys read from `@mastra/otel-exporter@1.4.0` (`getAttributes`) and `@mastra/observability@1.17.9`
 * (model tracing); fixtures `test/spans/mastra-*.otlp.json` are real captures.
 */
import { isJsonObject, type JsonValue } from '../model/json.js';
import type { SpanRecord } from '../model/span-record.js';
import { cutAnswer, withAnswerText } from './answer-text.js';
import { capturedJson, jsonAttribute } from './attributes.js';
import type { Convention, RequestedCall, SpanReading } from './convention.js';

/** Attribute keys of Mastra's OTel export that this normalizer reads. */
export const MASTRA = {
  spanType: 'mastra.span.type',
  stepInput: 'mastra.model_step.input',
  stepOutput: 'mastra.model_step.output',
  modelMetadata: 'mastra.metadata.modelMetadata',
} as const;

/** The convention's name as it appears on ToolCalls. */
export const MASTRA_CONVENTION = 'mastra';

/** The Mastra convention: claims `mastra.span.type=model_step` spans as turns, and the model spans around them as structure. */
export const mastra: Convention = {
  name: MASTRA_CONVENTION,
  marks: { keys: [MASTRA.spanType] },
  read(span: SpanRecord): SpanReading | undefined {
    const type = span.attributes[MASTRA.spanType];
    if (type === 'model_step') return readStep(span);
    // The chat span under each step has lost the tool calls (GenAI would read a second, empty
    // turn), and the generation span repeats every step's calls: bookkeeping, not turns.
    if (type === 'model_inference' || type === 'model_generation')
      return { kind: 'structure', convention: MASTRA_CONVENTION };
    return undefined;
  },
};

/**
 * A model step is one LLM turn. Its input is a preview (`"[tool-result: get_order]"`, or a
 * summary of the value) with neither call ids nor results, so the results shown count as not
 * captured: the turn consumes what the previous turn's calls returned, which is what the agent
 * loop sends back. The message count still orders steps that started in the same millisecond.
 */
function readStep(span: SpanRecord): SpanReading {
  const output = jsonAttribute(span.attributes, MASTRA.stepOutput);
  const input = jsonAttribute(span.attributes, MASTRA.stepInput);
  const recorded = output.captured && isJsonObject(output.value) ? output.value : undefined;
  const toolCalls = recorded?.toolCalls;
  const answer = cutAnswer(withAnswerText(undefined, recorded?.text));
  const model = modelId(span);
  return {
    kind: 'turn',
    turn: {
      requested: Array.isArray(toolCalls) ? requested(toolCalls) : [],
      shown: undefined,
      historyLength: input.captured && Array.isArray(input.value) ? input.value.length : 0,
      ...(model && { model }),
      ...(answer && { answer }),
      convention: MASTRA_CONVENTION,
    },
  };
}

/** `[{toolCallId, toolName, args}]`; `input` is accepted too, the AI SDK's own name for the arguments. */
function requested(toolCalls: readonly JsonValue[]): RequestedCall[] {
  const calls: RequestedCall[] = [];
  for (const call of toolCalls) {
    if (!isJsonObject(call) || typeof call.toolName !== 'string' || call.toolName.trim() === '') continue;
    const id = typeof call.toolCallId === 'string' ? call.toolCallId.trim() : '';
    const args = call.args ?? call.input;
    calls.push({
      ...(id && { callId: id }),
      tool: call.toolName.trim(),
      args: args === undefined ? { captured: false } : capturedJson(args),
    });
  }
  return calls;
}

/** `mastra.metadata.modelMetadata` = `{"modelId", "modelVersion", "modelProvider"}`. */
function modelId(span: SpanRecord): string | undefined {
  const metadata = jsonAttribute(span.attributes, MASTRA.modelMetadata);
  if (!metadata.captured || !isJsonObject(metadata.value)) return undefined;
  const id = metadata.value.modelId;
  return typeof id === 'string' && id.trim() !== '' ? id.trim() : undefined;
}
