/**
 * What the sdk-genai-* capture scripts share: a real SDK provider (sdk-trace-base 2.x) recording
 * into memory, the mock model's `chat` span in the GenAI conventions' shape, and each case's
 * spans written as an OTLP JSON file (JsonTraceSerializer) into test/spans/.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { context, SpanKind, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The model every `chat` span names. */
export const MODEL = 'mock-model';

const OUT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A recorder for one script: `service` and the instrumentation scope its spans carry. */
export interface GenAiRecorder {
  tracer: Tracer;
  /** One model turn: its `chat` span (history in, reply out), and the reply as a message. */
  chat(messages: Json[], parts: Json[], finishReason: string, usage?: boolean): Promise<Json>;
  /** Runs one case and writes its spans to test/spans/`file`; prints what it wrote. */
  record(file: string, run: () => Promise<void>): Promise<void>;
  shutdown(): Promise<void>;
}

export function genAiRecorder(service: string, scope: string, version: string): GenAiRecorder {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer(scope, version);
  return {
    tracer,
    chat: (messages, parts, finishReason, usage = false) => {
      const output = { role: 'assistant', parts };
      return tracer.startActiveSpan(`chat ${MODEL}`, { kind: SpanKind.CLIENT }, async (span) => {
        span.setAttributes({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'mock',
          'gen_ai.request.model': MODEL,
          'gen_ai.input.messages': JSON.stringify(messages),
          'gen_ai.output.messages': JSON.stringify([{ ...output, finish_reason: finishReason }]),
          ...(usage && {
            'gen_ai.usage.input_tokens': 40 + messages.length * 10,
            'gen_ai.usage.output_tokens': 12,
          }),
        });
        await sleep(2);
        span.end();
        return output;
      });
    },
    record: async (file, run) => {
      exporter.reset();
      await run();
      await provider.forceFlush();
      const spans = exporter.getFinishedSpans();
      const path = join(OUT_DIR, file);
      writeFileSync(path, Buffer.from(JsonTraceSerializer.serializeRequest(spans) as Uint8Array));
      console.log(`${path}: ${spans.length} spans`);
    },
    shutdown: () => provider.shutdown(),
  };
}
