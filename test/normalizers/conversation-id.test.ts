/**
 * Which conversation a trace belongs to, read from spans a real SDK provider recorded: each
 * convention's session or thread key, the outermost agent run's id winning, other ids ignored
 * with a warning, ids that are not strings or are too long refused with a message while the
 * trace itself reads as before.
 */
import { context, type Attributes as OtelAttributes, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { fromReadableSpan } from '../../src/io/readable-span.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { MAX_CONVERSATION_ID_LENGTH } from '../../src/normalizers/conversation-id.js';
import { normalizeSpans } from '../../src/normalizers/normalize.js';

/**
 * An agent run (`invoke_agent`) with one tool call and, inside the tool, a sub-agent run:
 * attributes for each of the three spans, and for a plain root span above them when given.
 */
function record(attributes: {
  root?: OtelAttributes;
  agent?: OtelAttributes;
  tool?: OtelAttributes;
  subAgent?: OtelAttributes;
}): Trajectory {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('app');
  const root = attributes.root ? tracer.startSpan('POST /chat', { attributes: attributes.root }) : undefined;
  const inRoot = root ? trace.setSpan(context.active(), root) : context.active();
  const agent = tracer.startSpan(
    'invoke_agent support',
    {
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'support',
        ...attributes.agent,
      },
    },
    inRoot,
  );
  const tool = tracer.startSpan(
    'execute_tool get_order',
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_order',
        'gen_ai.tool.call.id': 'call_1',
        ...attributes.tool,
      },
    },
    trace.setSpan(inRoot, agent),
  );
  const sub = tracer.startSpan(
    'invoke_agent helper',
    {
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'helper',
        ...attributes.subAgent,
      },
    },
    trace.setSpan(inRoot, tool),
  );
  sub.end();
  tool.end();
  agent.end();
  root?.end();
  const [trajectory, ...others] = normalizeSpans(exporter.getFinishedSpans().map(fromReadableSpan));
  expect(others).toEqual([]);
  return trajectory as Trajectory;
}

describe("a trace's conversation id", () => {
  it.each([
    ['OTel GenAI', 'gen_ai.conversation.id'],
    ['OpenInference', 'session.id'],
    ['Langfuse', 'langfuse.session.id'],
    ['LangSmith (thread_id)', 'langsmith.metadata.thread_id'],
    ['LangSmith (session_id)', 'langsmith.metadata.session_id'],
    ['LangSmith (conversation_id)', 'langsmith.metadata.conversation_id'],
    ['Vercel AI SDK telemetry metadata', 'ai.telemetry.metadata.sessionId'],
    ['Google ADK', 'gcp.vertex.agent.session_id'],
    ['OpenLLMetry association properties', 'traceloop.association.properties.session_id'],
  ])('is read from %s (%s)', (_name, key) => {
    const trajectory = record({ agent: { [key]: 'conv-42' } });
    expect(trajectory.conversationId).toBe('conv-42');
    expect(trajectory.issues).toEqual([]);
  });

  it('is the outermost agent run’s; a sub-agent’s own id is ignored and said so', () => {
    const trajectory = record({
      agent: { 'gen_ai.conversation.id': 'outer' },
      subAgent: { 'gen_ai.conversation.id': 'inner' },
    });
    expect(trajectory.conversationId).toBe('outer');
    expect(trajectory.issues).toEqual([
      expect.objectContaining({
        kind: 'conversation.other_ids',
        message: expect.stringMatching(/belongs to conversation "outer" .* ignored: "inner"/),
      }),
    ]);
  });

  it('is the agent run’s even when a span above it carries another id', () => {
    const trajectory = record({
      root: { 'session.id': 'web-session' },
      agent: { 'gen_ai.conversation.id': 'chat-7' },
    });
    expect(trajectory.conversationId).toBe('chat-7');
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['conversation.other_ids']);
  });

  it('falls back to the outermost span carrying one when no agent run does', () => {
    const trajectory = record({ root: { 'langfuse.session.id': 'lf-1' }, tool: { 'session.id': 'lf-1' } });
    expect(trajectory.conversationId).toBe('lf-1');
    expect(trajectory.issues).toEqual([]);
  });

  it('is absent when no span carries one', () => {
    expect(record({}).conversationId).toBeUndefined();
  });

  it('refuses an id that is not a string, with where and why; the trace reads as before', () => {
    const trajectory = record({ agent: { 'gen_ai.conversation.id': 42 } });
    expect(trajectory.conversationId).toBeUndefined();
    expect(trajectory.calls.map((call) => call.tool)).toEqual(['get_order']);
    expect(trajectory.issues).toEqual([
      expect.objectContaining({
        kind: 'conversation.invalid_id',
        message: expect.stringMatching(
          /^span [0-9a-f]{16}: gen_ai.conversation.id is a number \(42\), not a string, so the trace is judged on its own/,
        ),
      }),
    ]);
  });

  it('refuses an id too long to be one', () => {
    const trajectory = record({ agent: { 'session.id': 'x'.repeat(10_000) } });
    expect(trajectory.conversationId).toBeUndefined();
    expect(trajectory.issues[0]?.message).toContain(
      `session.id is 10000 characters long, over the ${MAX_CONVERSATION_ID_LENGTH} a conversation id may have`,
    );
    expect(trajectory.calls).toHaveLength(1);
  });

  it('accepts an id of the longest length allowed', () => {
    const id = 'y'.repeat(MAX_CONVERSATION_ID_LENGTH);
    expect(record({ agent: { 'session.id': id } }).conversationId).toBe(id);
  });

  it('refuses an array', () => {
    const trajectory = record({ agent: { 'gen_ai.conversation.id': ['a', 'b'] } });
    expect(trajectory.conversationId).toBeUndefined();
    expect(trajectory.issues[0]?.message).toContain('is an array (["a","b"]), not a string');
  });
});
