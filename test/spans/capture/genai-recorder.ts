/**
 * What the sdk-genai-* capture scripts share: a real SDK provider (sdk-trace-base 2.x) recording
 * into memory, the mock model's `chat` span in the GenAI conventions' shape, and each case's
 * spans written as an OTLP JSON file (JsonTraceSerializer) into test/spans/.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { context, type Span, SpanKind, type Tracer } from '@opentelemetry/api';
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

/** A pre-execution decision, as the GenAI conventions' `gen_ai.tool.call.decision` event records it. */
export type Decision = 'allow' | 'deny' | 'require_approval';

/** A tool call the mock model asks for, with the decisions recorded before it runs. */
export interface MockCall {
  id: string;
  name: string;
  arguments: { [key: string]: Json };
  decisions?: Decision[];
}

/** The call's decisions, in order, as events on the span that decided (the agent's). */
export async function recordDecisions(agent: Span, call: MockCall): Promise<void> {
  for (const outcome of call.decisions ?? []) {
    agent.addEvent('gen_ai.tool.call.decision', {
      'gen_ai.tool.call.decision.outcome': outcome,
      'gen_ai.tool.call.id': call.id,
      'gen_ai.tool.name': call.name,
    });
    await sleep(1);
  }
}

/** A recorder for one script: `service` and the instrumentation scope its spans carry. */
export interface GenAiRecorder {
  tracer: Tracer;
  /** One model turn: its `chat` span (history in, reply out), and the reply as a message. */
  chat(messages: Json[], parts: Json[], finishReason: string, usage?: boolean): Promise<Json>;
  /**
   * The mock model's loop: from the user's `prompt`, per turn a `chat` asking for its calls, each
   * run by `execute` (which returns its `tool_call_response` part), the results sent back as one
   * tool message; then a final answer.
   */
  converse<C extends MockCall>(
    prompt: string,
    turns: C[][],
    execute: (call: C) => Promise<Json>,
  ): Promise<void>;
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
  const chat: GenAiRecorder['chat'] = (messages, parts, finishReason, usage = false) => {
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
  };
  return {
    tracer,
    chat,
    converse: async (prompt, turns, execute) => {
      const messages: Json[] = [{ role: 'user', parts: [{ type: 'text', content: prompt }] }];
      for (const calls of turns) {
        const parts = calls.map((call) => ({
          type: 'tool_call',
          id: call.id,
          name: call.name,
          arguments: call.arguments,
        }));
        messages.push(await chat(messages, parts, 'tool_call'));
        const results: Json[] = [];
        for (const call of calls) results.push(await execute(call));
        messages.push({ role: 'tool', parts: results });
      }
      messages.push(await chat(messages, [{ type: 'text', content: 'Done.' }], 'stop'));
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
