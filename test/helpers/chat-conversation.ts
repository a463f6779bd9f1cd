/**
 * A chat app's conversation as a real SDK provider records it: one trace per user message, each
 * an `invoke_agent` run of the demo agent carrying `gen_ai.conversation.id`. The order lookup
 * happens in one message's trace and the refund in another's.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { runAgent } from '../../src/demo/agent.js';
import { type CapturedConversation, captureConversations } from '../../src/demo/capture.js';
import { ScriptedModel, type ScriptStep } from '../../src/demo/mock-model.js';
import { supportTools } from '../../src/demo/tools.js';
import type { Report } from '../../src/model/report.js';
import { type Pipeline, type PipelineOptions, pipeline, workerReady } from '../processor/harness.js';

const order = { orderId: 'O-17' };
const lookUp: ScriptStep = () => ({ toolCalls: [{ name: 'get_order', arguments: order }] });
const refund: ScriptStep = () => ({
  toolCalls: [{ name: 'issue_refund', arguments: { ...order, amount: 40 } }],
});
const answer =
  (text: string): ScriptStep =>
  () => ({ text });

const MESSAGES = {
  lookup: { userMessage: 'Where is my order O-17?', steps: [lookUp, answer('It was delivered on Monday.')] },
  refund: { userMessage: 'It is broken: refund it.', steps: [refund, answer('Refunded $40.')] },
};

/**
 * The two messages of one conversation, in this order, as OTLP JSON: `lookup-first` looks the
 * order up before refunding, `refund-first` refunds before any lookup. `conversationId`
 * null: the traces carry no id. One trace per message, each ended before the next starts.
 */
export function captureChat(
  order: 'lookup-first' | 'refund-first',
  conversationId: string | null = `chat-${order}`,
): Promise<CapturedConversation[]> {
  const names = order === 'lookup-first' ? (['lookup', 'refund'] as const) : (['refund', 'lookup'] as const);
  return captureConversations(
    names.map((name) => ({
      agent: 'support-agent',
      tools: supportTools,
      ...MESSAGES[name],
      ...(conversationId !== null && { conversationId }),
    })),
    'chat-app',
  );
}

/** A native conversation scenario: the lookup before the refund, both required. */
export const CHAT_SCENARIO = {
  id: 'chat.refund',
  scope: 'conversation',
  tools: { required: ['get_order', 'issue_refund'] },
  order: { before: [{ before: 'get_order', after: 'issue_refund' }] },
};

/** The same rules judged per trace (the default scope). */
export const PER_TRACE_SCENARIO = { ...CHAT_SCENARIO, id: 'chat.refund.per-trace', scope: undefined };

/** Seed 001's assertion JSON for the same conversation: it judges conversations as that document does. */
export const SEED_001_ASSERTIONS = {
  id: 'chat.refund.seed',
  expected_tool_sequence: [{ tool: 'get_order' }, { tool: 'issue_refund' }],
  expected_tool_calls: ['get_order', 'issue_refund'],
};

/**
 * The same messages' spans as an app's exporter gets them (one list per trace), recorded by a
 * real SDK provider, for sending with the real OTLP exporters.
 */
export function recordChat(
  order: 'lookup-first' | 'refund-first',
  conversationId = `chat-${order}`,
): Promise<ReadableSpan[][]> {
  return recordMessages(
    order === 'lookup-first' ? ['lookup', 'refund'] : ['refund', 'lookup'],
    conversationId,
  );
}

/** One trace per message, in this order, of conversation `conversationId`, recorded by a real SDK provider. */
export async function recordMessages(
  names: readonly (keyof typeof MESSAGES)[],
  conversationId: string,
): Promise<ReadableSpan[][]> {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  try {
    const tracer = provider.getTracer('chat-app');
    const traces: ReadableSpan[][] = [];
    for (const name of names) {
      exporter.reset();
      const { userMessage, steps } = MESSAGES[name];
      await runAgent(
        tracer,
        'support-agent',
        new ScriptedModel(steps),
        supportTools(),
        userMessage,
        conversationId,
      );
      traces.push([...exporter.getFinishedSpans()]);
      // The next message comes later: its trace starts after this one ended, on any clock.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return traces;
  } finally {
    await provider.shutdown();
    context.disable();
  }
}

/** A processor judging {@link CHAT_SCENARIO} in a real pipeline (harness.ts), and how a chat app sends it messages. */
export interface ChatPipeline {
  pipeline: Pipeline;
  /** Every report `onReport` got, in order. */
  reports: Report[];
  /** One user message of conversation `conversationId`: a trace of its own; resolves with its reports once judged. */
  send(conversationId: string | number, message: keyof typeof MESSAGES): Promise<Report[]>;
}

/**
 * The processor with {@link CHAT_SCENARIO}, under sdk-trace-base's BasicTracerProvider (the
 * provider most apps make); `worker: true` judges on a worker thread, started
 * before this resolves. Conversations go idle after 1 s, unless `limits` say otherwise: long
 * after a message's trace ends (and a judgement's round trip to a worker), even on a loaded
 * machine, where 150 ms was once too short between two messages.
 * The caller shuts `pipeline` down.
 */
export async function chatPipeline(
  options: { worker?: boolean; limits?: PipelineOptions['limits']; conversations?: false } = {},
): Promise<ChatPipeline> {
  const reports: Report[] = [];
  const p = pipeline(
    {
      scenarios: [CHAT_SCENARIO],
      limits: { conversationIdleMs: 1_000, ...options.limits },
      onReport: (report) => reports.push(report),
      ...(options.worker && { worker: true }),
      ...(options.conversations === false && { conversations: false }),
    },
    undefined,
    BasicTracerProvider,
  );
  const tracer = p.provider.getTracer('chat-app');
  const send = async (conversationId: string | number, message: keyof typeof MESSAGES) => {
    const before = reports.length;
    const { userMessage, steps } = MESSAGES[message];
    await runAgent(
      tracer,
      'support-agent',
      new ScriptedModel(steps),
      supportTools(),
      userMessage,
      conversationId as string,
    );
    await until(() => reports.length > before);
    return reports.slice(before);
  };
  if (options.worker) await workerReady(p.processor);
  return { pipeline: p, reports, send };
}

/** Waits until `done()` holds; throws after `timeoutMs` (a worker thread takes a while to start). */
export async function until(done: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The reports judged final. */
export const finalOf = (reports: readonly Report[]): Report[] =>
  reports.filter((report) => report.final === true);
