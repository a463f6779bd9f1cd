/**
 * Conversation keys a convention reads on its own spans only: the OpenAI Agents SDK's trace
 * `group_id` as logfire records it, on spans a real SDK provider recorded. `group_id` is a
 * generic key (a Kafka consumer's span may carry one), so it makes a conversation only on the
 * spans logfire's Agents SDK convention claims; logfire writes the SDK's None as `"null"`.
 */

import { readFileSync } from 'node:fs';
import { context, type Attributes as OtelAttributes, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readStoredTraces } from '../../src/io/read-traces.js';
import { fromReadableSpan } from '../../src/io/readable-span.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { MAX_CONVERSATION_ID_LENGTH } from '../../src/normalizers/conversation-id.js';
import { normalizeSpans } from '../../src/normalizers/normalize.js';
import { fixture } from '../helpers/fixtures.js';

const AGENTS_SCOPE = 'logfire.openai_agents';
const template = (text: string) => ({ 'logfire.msg_template': text, 'logfire.span_type': 'span' });

/** Where a `group_id` goes: the SDK trace's span, its function span, or a Kafka consumer's span. */
interface GroupIds {
  traceSpan?: OtelAttributes['group_id'];
  functionSpan?: OtelAttributes['group_id'];
  kafkaSpan?: OtelAttributes['group_id'];
}

/**
 * One Agents SDK run as logfire records it (`OpenAI Agents trace` -> `Agent run` -> `Function:
 * get_order`), and under the function a Kafka consumer's span of another instrumentation. The
 * trace span's `group_id` is `"null"` unless given, as logfire writes an SDK trace without one.
 */
function recordAgentsRun(groupIds: GroupIds, otherAttributes: OtelAttributes = {}): Trajectory {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const agents = provider.getTracer(AGENTS_SCOPE);
  const kafka = provider.getTracer('@opentelemetry/instrumentation-kafkajs');
  const traceSpan = agents.startSpan('OpenAI Agents trace: {name}', {
    attributes: {
      ...template('OpenAI Agents trace: {name}'),
      name: 'Support chat',
      agent_trace_id: 'trace_1',
      metadata: 'null',
      ...('traceSpan' in groupIds ? optional(groupIds.traceSpan) : { group_id: 'null' }),
    },
  });
  const inTrace = trace.setSpan(context.active(), traceSpan);
  const run = agents.startSpan(
    'Agent run: {name!r}',
    {
      attributes: {
        ...template('Agent run: {name!r}'),
        name: 'support',
        'gen_ai.system': 'openai',
        ...otherAttributes,
      },
    },
    inTrace,
  );
  const tool = agents.startSpan(
    'Function: {name}',
    {
      attributes: {
        ...template('Function: {name}'),
        name: 'get_order',
        input: '{"orderId":"A1001"}',
        output: '{"status":"delivered"}',
        'gen_ai.system': 'openai',
        ...optional(groupIds.functionSpan),
      },
    },
    trace.setSpan(inTrace, run),
  );
  const consumer = kafka.startSpan(
    'orders process',
    {
      attributes: {
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.consumer.group.name': 'orders-consumers',
        ...optional(groupIds.kafkaSpan),
      },
    },
    trace.setSpan(trace.setSpan(inTrace, run), tool),
  );
  for (const span of [consumer, tool, run, traceSpan]) span.end();
  const [trajectory, ...others] = normalizeSpans(exporter.getFinishedSpans().map(fromReadableSpan));
  expect(others).toEqual([]);
  return trajectory as Trajectory;
}

function optional(value: OtelAttributes['group_id']): OtelAttributes {
  return value === undefined ? {} : { group_id: value };
}

/** An OTel GenAI agent run (no Agents SDK span at all) whose tool consumes from Kafka. */
function recordGenAiRunWithKafka(groupId: string): Trajectory {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const app = provider.getTracer('app');
  const agent = app.startSpan('invoke_agent support', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' },
  });
  const inAgent = trace.setSpan(context.active(), agent);
  const tool = app.startSpan(
    'execute_tool get_order',
    { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_order' } },
    inAgent,
  );
  const consumer = provider
    .getTracer('@opentelemetry/instrumentation-kafkajs')
    .startSpan(
      'orders process',
      { attributes: { 'messaging.system': 'kafka', group_id: groupId } },
      trace.setSpan(inAgent, tool),
    );
  for (const span of [consumer, tool, agent]) span.end();
  const [trajectory] = normalizeSpans(exporter.getFinishedSpans().map(fromReadableSpan));
  return trajectory as Trajectory;
}

describe('the OpenAI Agents SDK trace’s group_id (logfire)', () => {
  it('is the conversation id, read on the trace span (a structure span of the convention)', () => {
    const trajectory = recordAgentsRun({ traceSpan: 'thread_ana_a1001' });
    expect(trajectory.conversationId).toBe('thread_ana_a1001');
    expect(trajectory.calls.map((call) => call.tool)).toEqual(['get_order']);
    expect(trajectory.issues).toEqual([]);
  });

  it.each([
    { when: '"null" (logfire’s None)', groupId: 'null', expected: undefined },
    { when: 'empty', groupId: '', expected: undefined },
    { when: 'absent', groupId: undefined, expected: undefined },
    { when: '"NULL" (not what logfire writes for None)', groupId: 'NULL', expected: 'NULL' },
    { when: '"None"', groupId: 'None', expected: 'None' },
    { when: 'a chat thread id', groupId: 'thread_1', expected: 'thread_1' },
  ])('when $when, the conversation is $expected', ({ groupId, expected }) => {
    const trajectory = recordAgentsRun({ traceSpan: groupId });
    expect(trajectory.conversationId).toBe(expected);
    expect(trajectory.issues).toEqual([]);
  });

  it('that is not a string is refused with where and why, as any conversation key is', () => {
    const trajectory = recordAgentsRun({ traceSpan: 42 });
    expect(trajectory.conversationId).toBeUndefined();
    expect(trajectory.issues).toEqual([
      expect.objectContaining({
        kind: 'conversation.invalid_id',
        message: expect.stringMatching(/^span [0-9a-f]{16}: group_id is a number \(42\), not a string/),
      }),
    ]);
  });

  it('is read on any span the convention claims (a function span), not only the trace span', () => {
    expect(recordAgentsRun({ functionSpan: 'thread_2' }).conversationId).toBe('thread_2');
  });

  it('gives way to a conversation key on the agent run, with the other id said', () => {
    const trajectory = recordAgentsRun(
      { traceSpan: 'thread_1' },
      { 'gen_ai.conversation.id': 'conv-on-the-run' },
    );
    expect(trajectory.conversationId).toBe('conv-on-the-run');
    expect(trajectory.issues).toEqual([
      expect.objectContaining({
        kind: 'conversation.other_ids',
        message: expect.stringContaining('ignored: "thread_1"'),
      }),
    ]);
  });
});

describe('a group_id on a span the Agents SDK convention does not claim', () => {
  it('makes no conversation in an OTel GenAI agent trace (a Kafka consumer’s group)', () => {
    const trajectory = recordGenAiRunWithKafka('orders-consumers');
    expect(trajectory.calls.map((call) => call.tool)).toEqual(['get_order']);
    expect(trajectory.conversationId).toBeUndefined();
    expect(trajectory.issues).toEqual([]);
  });

  it('makes no conversation in an Agents SDK trace whose own group_id is "null"', () => {
    const trajectory = recordAgentsRun({ kafkaSpan: 'orders-consumers' });
    expect(trajectory.conversationId).toBeUndefined();
    expect(trajectory.issues).toEqual([]);
  });

  it('is not even an "other id" beside the trace’s own group_id', () => {
    const trajectory = recordAgentsRun({ traceSpan: 'thread_1', kafkaSpan: 'orders-consumers' });
    expect(trajectory.conversationId).toBe('thread_1');
    expect(trajectory.issues).toEqual([]);
  });
});

describe('group_id, for any values', () => {
  const groupId = fc.oneof(
    fc.constantFrom('null', '', 'NULL', 'thread_1', 'x'.repeat(MAX_CONVERSATION_ID_LENGTH + 1)),
    fc.string({ maxLength: 40 }),
    fc.string({ minLength: MAX_CONVERSATION_ID_LENGTH - 2, maxLength: MAX_CONVERSATION_ID_LENGTH + 2 }),
  );

  it('the conversation is the trace span’s group_id when usable, whatever the Kafka span says', () => {
    fc.assert(
      fc.property(
        fc.option(groupId, { nil: undefined }),
        fc.option(groupId, { nil: undefined }),
        (own, foreign) => {
          const trajectory = recordAgentsRun({ traceSpan: own, kafkaSpan: foreign });
          // The oracle: absent, empty and "null" are no id; too long is refused; the rest is the id.
          const none = own === undefined || own === '' || own === 'null';
          const tooLong = !none && own.length > MAX_CONVERSATION_ID_LENGTH;
          expect(trajectory.conversationId).toBe(none || tooLong ? undefined : own);
          expect(trajectory.issues.map((issue) => issue.kind)).toEqual(
            tooLong ? ['conversation.invalid_id'] : [],
          );
        },
      ),
      { numRuns: 150 },
    );
  });
});

import { describeCorpus } from '../helpers/corpus.js';

const CORPUS = new URL('../../../shared/corpus/realworld/openai-agents-logfire/', import.meta.url);

function corpusSpans(name: string): SpanRecord[] {
  const read = readStoredTraces(readFileSync(new URL(`${name}.otlp.json`, CORPUS), 'utf8'), name);
  if (read.input?.format !== 'otlp-json' || read.errors.length > 0)
    throw new Error(`${name}: ${JSON.stringify(read.errors)}`);
  return read.input.spans;
}

const groupIdOfTraceSpans = (spans: readonly SpanRecord[]) =>
  spans.filter((span) => span.name === 'OpenAI Agents trace: {name}').map((span) => span.attributes.group_id);

describeCorpus('group_id in recorded Agents SDK traces', () => {
  it.each(['responses-tool-then-handoff', 'function-tool-exception', 'mcp-random-number'])(
    'the corpus trace %s, whose trace span says group_id "null", is no conversation',
    (name) => {
      const spans = corpusSpans(name);
      expect(groupIdOfTraceSpans(spans)).toEqual(['null']);
      const trajectories = normalizeSpans(spans);
      expect(trajectories).toHaveLength(1);
      expect(trajectories[0]?.conversationId).toBeUndefined();
      expect(trajectories[0]?.issues).toEqual([]);
    },
  );

  it('the two message traces of logfire-openai-agents-conversation are one conversation', () => {
    const spans = fixture('logfire-openai-agents-conversation');
    expect(groupIdOfTraceSpans(spans)).toEqual(['thread_ana_a1001', 'thread_ana_a1001']);
    const trajectories = normalizeSpans(spans);
    expect(
      trajectories.map((trajectory) => ({
        traceId: trajectory.traceId,
        conversationId: trajectory.conversationId,
        tools: trajectory.calls.map((call) => call.tool),
        issues: trajectory.issues,
      })),
    ).toEqual([
      {
        traceId: '1'.padStart(32, '0'),
        conversationId: 'thread_ana_a1001',
        tools: ['get_order'],
        issues: [],
      },
      {
        traceId: '2'.padStart(32, '0'),
        conversationId: 'thread_ana_a1001',
        tools: ['issue_refund'],
        issues: [],
      },
    ]);
  });
});
