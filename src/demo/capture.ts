/**
 * Runs scripted conversations of the demo agent under a real OTel SDK provider and hands back
 * each trace as the OTLP JSON an exporter would send: the same bytes `toolpath eval` reads.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { runAgent } from './agent.js';
import { DEMO_CONVERSATIONS, type DemoConversation } from './conversations.js';
import { ScriptedModel, type ScriptStep } from './mock-model.js';
import { type DemoTool, supportTools } from './tools.js';

/** A conversation to run: which agent, what the user asks, the tools and the model's script. */
export interface Conversation {
  agent: string;
  userMessage: string;
  /** Fresh tools per run, so every run starts from the same state. */
  tools: () => Record<string, DemoTool>;
  steps: ScriptStep[];
  /** The chat conversation this message belongs to (`gen_ai.conversation.id`), if any. */
  conversationId?: string;
}

/** One conversation's trace, serialized as an OTLP JSON ExportTraceServiceRequest. */
export interface CapturedConversation<C extends Conversation = Conversation> {
  conversation: C;
  traceId: string;
  otlpJson: string;
}

/**
 * Runs each conversation in turn; each becomes one trace. `serviceName` goes on the resource,
 * with `resourceAttributes` (e.g. a task id that groups repeated runs).
 */
export async function captureConversations<C extends Conversation>(
  conversations: readonly C[],
  serviceName: string,
  resourceAttributes: Record<string, string> = {},
): Promise<CapturedConversation<C>[]> {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ ...resourceAttributes, 'service.name': serviceName }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  try {
    const tracer = provider.getTracer(serviceName, '1.0.0');
    const traces: CapturedConversation<C>[] = [];
    for (const conversation of conversations) {
      exporter.reset();
      const model = new ScriptedModel(conversation.steps);
      await runAgent(
        tracer,
        conversation.agent,
        model,
        conversation.tools(),
        conversation.userMessage,
        conversation.conversationId,
      );
      await provider.forceFlush();
      const spans = exporter.getFinishedSpans();
      const bytes = JsonTraceSerializer.serializeRequest([...spans]);
      if (!bytes) throw new Error('the OTLP JSON serializer returned nothing');
      const traceId = spans[0]?.spanContext().traceId ?? '';
      traces.push({ conversation, traceId, otlpJson: new TextDecoder().decode(bytes) });
    }
    return traces;
  } finally {
    await provider.shutdown();
    context.disable();
  }
}

/** One demo conversation's trace. */
export type DemoTrace = CapturedConversation<DemoConversation & Conversation>;

/** Runs the demo's three refund conversations. */
export function captureDemoTraces(conversations = DEMO_CONVERSATIONS): Promise<DemoTrace[]> {
  const runs = conversations.map((conversation) => ({
    ...conversation,
    agent: 'support-agent',
    userMessage: 'Please refund order O-17.',
    tools: supportTools,
  }));
  return captureConversations(runs, 'toolpath-demo-agent');
}
