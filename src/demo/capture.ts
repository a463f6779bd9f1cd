/**
 * Runs the demo conversations under a real OTel SDK provider and hands back each trace as the
 * OTLP JSON an exporter would send: the same bytes `toolpath eval` reads from disk.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { runAgent } from './agent.js';
import { DEMO_CONVERSATIONS, type DemoConversation } from './conversations.js';
import { ScriptedModel } from './mock-model.js';
import { supportTools } from './tools.js';

/** One demo conversation's trace, serialized as an OTLP JSON ExportTraceServiceRequest. */
export interface DemoTrace {
  conversation: DemoConversation;
  traceId: string;
  otlpJson: string;
}

/** Runs every demo conversation; each becomes one trace. */
export async function captureDemoTraces(conversations = DEMO_CONVERSATIONS): Promise<DemoTrace[]> {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'toolpath-demo-agent' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  try {
    const tracer = provider.getTracer('toolpath-demo', '1.0.0');
    const traces: DemoTrace[] = [];
    for (const conversation of conversations) {
      exporter.reset();
      await runAgent(
        tracer,
        'support-agent',
        new ScriptedModel(conversation.steps),
        supportTools(),
        'Please refund order O-17.',
      );
      await provider.forceFlush();
      const spans = exporter.getFinishedSpans();
      const bytes = JsonTraceSerializer.serializeRequest([...spans]);
      if (!bytes) throw new Error('the OTLP JSON serializer returned nothing');
      traces.push({
        conversation,
        traceId: spans[0]?.spanContext().traceId ?? '',
        otlpJson: new TextDecoder().decode(bytes),
      });
    }
    return traces;
  } finally {
    await provider.shutdown();
    context.disable();
  }
}
