/**
 * The demo agent: a plain tool-calling loop, instrumented the way the OTel GenAI conventions
 * say (an `invoke_agent` span, a `chat` span per model request, an `execute_tool` span per tool
 * call, arguments and results recorded), so its traces look like a real framework's.
 */
import { context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import type { JsonValue } from '../model/json.js';
import type { ChatMessage, MessagePart, ScriptedModel } from './mock-model.js';
import type { DemoTool } from './tools.js';

const MAX_STEPS = 8;

/**
 * Runs one user message to its final answer; all of it is one trace (of the conversation
 * `conversationId`, when given).
 */
export async function runAgent(
  tracer: Tracer,
  agentName: string,
  model: ScriptedModel,
  tools: Record<string, DemoTool>,
  userMessage: string,
  conversationId?: string,
): Promise<string> {
  return tracer.startActiveSpan(
    `invoke_agent ${agentName}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': agentName,
        // A chat app's conversation: one trace per user message, all carrying its id.
        ...(conversationId !== undefined && { 'gen_ai.conversation.id': conversationId }),
      },
    },
    async (agentSpan) => {
      try {
        const conversation: ChatMessage[] = [
          { role: 'user', parts: [{ type: 'text', content: userMessage }] },
        ];
        const toolNames = new Map<string, string>();
        for (let step = 0; step < MAX_STEPS; step++) {
          const reply = chat(tracer, model, conversation, toolNames);
          conversation.push(reply);
          const calls = reply.parts.filter((part) => part.type === 'tool_call');
          if (calls.length === 0)
            return reply.parts.map((part) => (part.type === 'text' ? part.content : '')).join('');
          for (const call of calls) toolNames.set(call.id, call.name);
          // Calls asked for in one reply run in parallel, as agent frameworks do.
          const results = await Promise.all(calls.map((call) => executeTool(tracer, agentName, tools, call)));
          conversation.push({ role: 'tool', parts: results });
        }
        return 'step limit reached';
      } finally {
        agentSpan.end();
      }
    },
  );
}

function chat(
  tracer: Tracer,
  model: ScriptedModel,
  conversation: readonly ChatMessage[],
  toolNames: ReadonlyMap<string, string>,
): ChatMessage {
  const span = tracer.startSpan(`chat ${model.name}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': model.name,
      'gen_ai.input.messages': JSON.stringify(conversation),
    },
  });
  const reply = model.reply(conversation, toolNames);
  span.setAttribute('gen_ai.output.messages', JSON.stringify([reply]));
  span.setAttribute('gen_ai.response.finish_reasons', [reply.finish_reason ?? 'stop']);
  span.end();
  return reply;
}

async function executeTool(
  tracer: Tracer,
  agentName: string,
  tools: Record<string, DemoTool>,
  call: Extract<MessagePart, { type: 'tool_call' }>,
): Promise<Extract<MessagePart, { type: 'tool_call_response' }>> {
  const span = tracer.startSpan(
    `execute_tool ${call.name}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.name,
        'gen_ai.tool.call.id': call.id,
        'gen_ai.tool.type': 'function',
        'gen_ai.agent.name': agentName,
        'gen_ai.tool.call.arguments': JSON.stringify(call.arguments),
      },
    },
    context.active(),
  );
  const response = await context.with(trace.setSpan(context.active(), span), () => invoke(span, tools, call));
  span.end();
  return { type: 'tool_call_response', id: call.id, response };
}

async function invoke(
  span: Span,
  tools: Record<string, DemoTool>,
  call: Extract<MessagePart, { type: 'tool_call' }>,
) {
  const tool = tools[call.name];
  try {
    if (!tool) throw new Error(`unknown tool ${call.name}`);
    const result = await tool(call.arguments);
    span.setAttribute('gen_ai.tool.call.result', JSON.stringify(result));
    return result as JsonValue;
  } catch (error) {
    const message = (error as Error).message;
    span.recordException(error as Error);
    span.setAttribute('error.type', (error as Error).name || 'Error');
    span.setStatus({ code: SpanStatusCode.ERROR, message });
    return { error: message };
  }
}
