/**
 * The guard against a silent pass: tool use the spans show but no convention read becomes the
 * `unread_tool_activity` issue naming the spans, and a trace of it is never passed. Spans come
 * from a real SDK provider; the tool spans of made-up conventions are recorded through it too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Attributes } from '@opentelemetry/api';
import { context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import { fromReadableSpan } from '../../src/io/readable-span.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { type Trajectory, UNREAD_TOOL_ACTIVITY } from '../../src/model/trajectory.js';
import { normalizeSpans, normalizeTrace } from '../../src/normalizers/normalize.js';
import { isToolCallFinish } from '../../src/normalizers/unread-activity.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { CORPUS_FILES, CORPUS_NOTE, corpusSpans, itCorpus } from '../helpers/corpus.js';

type Tracer = ReturnType<BasicTracerProvider['getTracer']>;

/** The spans one run of `body` records through a real provider, as span records. */
function record(
  body: (tracer: Tracer, child: (parent: Span) => Parameters<Tracer['startSpan']>[2]) => void,
): SpanRecord[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  body(provider.getTracer('agent'), (parent) => trace.setSpan(context.active(), parent));
  return exporter.getFinishedSpans().map(fromReadableSpan);
}

/** One span, ended at once. */
function span(
  tracer: Tracer,
  name: string,
  attributes: Attributes,
  parent?: Parameters<Tracer['startSpan']>[2],
): Span {
  const started = tracer.startSpan(name, { attributes }, parent);
  started.end();
  return started;
}

const AGENT = { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'support' };

/** A chat turn of the OTel GenAI conventions with these output messages. */
function chat(output: unknown[] | string, extra: Attributes = {}): Attributes {
  return {
    'gen_ai.operation.name': 'chat',
    'gen_ai.input.messages': JSON.stringify([
      { role: 'user', parts: [{ type: 'text', content: 'refund A-1' }] },
    ]),
    'gen_ai.output.messages': typeof output === 'string' ? output : JSON.stringify(output),
    ...extra,
  };
}

const TEXT_ANSWER = [
  { role: 'assistant', parts: [{ type: 'text', content: 'Done.' }], finish_reason: 'stop' },
];

/** An agent that answers with these turn attributes and, under its span, runs `tools`. */
function agentRun(
  turn: Attributes,
  tools: (tracer: Tracer, inside: Parameters<Tracer['startSpan']>[2]) => void = () => {},
): SpanRecord[] {
  return record((tracer, child) => {
    const root = tracer.startSpan('invoke_agent support', { attributes: AGENT });
    span(tracer, 'chat gpt-4o', turn, child(root));
    tools(tracer, child(root));
    root.end();
  });
}

function trajectoryOf(spans: readonly SpanRecord[]): Trajectory {
  const trajectory = normalizeTrace(spans[0]?.traceId as string, spans);
  if (!trajectory) throw new Error('no trajectory');
  return trajectory;
}

function unreadOf(trajectory: Trajectory) {
  return trajectory.issues.find((issue) => issue.kind === UNREAD_TOOL_ACTIVITY);
}

function spanIdOf(spans: readonly SpanRecord[], name: string): string {
  const found = spans.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no span ${name}`);
  return found.spanId;
}

const NO_TOOLS = parseScenario({ id: 'no-tools', tools: { allowed: [] } }, 'no-tools');
const REFUND_ONLY = parseScenario(
  { id: 'refund-only', tools: { allowed: ['issue_refund'], forbidden: ['delete_account'] } },
  'refund-only',
);

describe('tool spans no convention reads', () => {
  it.each([
    ['Function: lookup_order', {}],
    ['Handoff: triage → billing', {}],
    ['execute_tool lookup_order', { 'acme.tool.args': '{"order":"A-1"}' }],
    ['tools/call lookup_order', { 'rpc.system': 'jsonrpc' }],
    ['tool lookup_order', {}],
    ['acme.invoke', { 'tool.name': 'lookup_order' }],
    ['acme.invoke', { tool_call_id: 'call_1' }],
    ['acme.invoke', { 'tool_call.id': 'call_1' }],
  ] as [string, Attributes][])(
    'a span %s %j in an agent run is unread tool activity, named',
    (name, attributes) => {
      const spans = agentRun(chat(TEXT_ANSWER), (tracer, inside) => span(tracer, name, attributes, inside));
      const trajectory = trajectoryOf(spans);
      expect(trajectory.calls).toEqual([]);
      const unread = unreadOf(trajectory);
      expect(unread?.spanIds).toEqual([spanIdOf(spans, name)]);
      expect(unread?.message).toContain(`span ${spanIdOf(spans, name)} "${name}"`);
      expect(evaluate(trajectory, NO_TOOLS).verdict).toBe('inconclusive');
    },
  );

  it('takes no ordinary HTTP or database span under a tool for evidence, nor a plain answer', () => {
    const spans = agentRun(chat(TEXT_ANSWER), (tracer, inside) => {
      const tool = tracer.startSpan(
        'execute_tool issue_refund',
        { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'issue_refund' } },
        inside,
      );
      const inTool = trace.setSpan(context.active(), tool);
      span(
        tracer,
        'POST /refunds',
        { 'http.request.method': 'POST', 'url.full': 'https://pay/refunds' },
        inTool,
      );
      span(
        tracer,
        'INSERT refunds',
        { 'db.system.name': 'postgresql', 'db.query.text': 'INSERT ...' },
        inTool,
      );
      tool.end();
    });
    const trajectory = trajectoryOf(spans);
    expect(trajectory.issues).toEqual([]);
    expect(evaluate(trajectory, REFUND_ONLY).verdict).toBe('pass');
    expect(evaluate(trajectoryOf(agentRun(chat(TEXT_ANSWER))), NO_TOOLS).verdict).toBe('pass');
  });

  it('takes a same-named tool span inside a call read from another span for that call, another tool for a call of its own', () => {
    const spans = agentRun(chat(TEXT_ANSWER), (tracer, inside) => {
      const tool = tracer.startSpan(
        'execute_tool issue_refund',
        { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'issue_refund' } },
        inside,
      );
      const inTool = trace.setSpan(context.active(), tool);
      // An MCP server's own span of the same call, in a convention nothing reads.
      span(tracer, 'tools/call issue_refund', { 'rpc.system': 'jsonrpc' }, inTool);
      span(tracer, 'tool delete_account', {}, inTool);
      tool.end();
    });
    const trajectory = trajectoryOf(spans);
    expect(trajectory.calls.map((call) => call.tool)).toEqual(['issue_refund']);
    expect(unreadOf(trajectory)?.spanIds).toEqual([spanIdOf(spans, 'tool delete_account')]);
    // The refund it saw is allowed; the call nobody read could be the forbidden one.
    const report = evaluate(trajectory, REFUND_ONLY);
    expect(report.verdict).toBe('inconclusive');
  });

  it('judges a trace no convention claims but whose spans look like tool spans, instead of skipping it', () => {
    const spans = record((tracer, child) => {
      const root = tracer.startSpan('acme.agent.run', { attributes: { 'acme.agent': 'support' } });
      span(tracer, 'tool lookup_order', { 'acme.args': '{"order":"A-1"}' }, child(root));
      root.end();
    });
    const [trajectory] = normalizeSpans(spans);
    expect(trajectory?.calls).toEqual([]);
    expect(unreadOf(trajectory as Trajectory)?.spanIds).toEqual([spanIdOf(spans, 'tool lookup_order')]);
    expect(trajectory?.root?.name).toBe('acme.agent.run');
    expect(evaluate(trajectory as Trajectory, NO_TOOLS).verdict).toBe('inconclusive');
    // An ordinary service trace still has nothing to judge.
    const http = record((tracer, child) => {
      const root = tracer.startSpan('GET /orders', { attributes: { 'http.request.method': 'GET' } });
      span(tracer, 'SELECT orders', { 'db.system.name': 'postgresql' }, child(root));
      root.end();
    });
    expect(normalizeSpans(http)).toEqual([]);
  });
});

describe('tool requests a turn holds unread', () => {
  it.each([
    [
      'output messages that are not JSON',
      chat('[{"role":"assistant","parts":[{"type":"tool_call"'),
      'not a JSON list',
    ],
    [
      'a part of a shape no convention knows',
      chat([
        { role: 'assistant', parts: [{ type: 'function_call', call_id: 'c1', name: 'delete_account' }] },
      ]),
      'a part of type "function_call"',
    ],
    [
      'a tool_call part without a name',
      chat([{ role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', arguments: {} }] }]),
      'a tool_call part without a name',
    ],
    [
      'a message finishing for a tool call with no tool_call part',
      chat([{ role: 'assistant', parts: [{ type: 'text', content: '' }], finish_reason: 'tool_call' }]),
      'finish_reason "tool_call"',
    ],
    [
      'finish reasons that say tool_calls and no call read',
      chat([{ role: 'assistant', parts: [] }], { 'gen_ai.response.finish_reasons': ['tool_calls'] }),
      'finish reason tool_calls, but no tool call was read',
    ],
  ] as [string, Attributes, string][])('%s', (_, turn, why) => {
    const spans = agentRun(turn);
    const trajectory = trajectoryOf(spans);
    const unread = unreadOf(trajectory);
    expect(unread?.spanIds).toEqual([spanIdOf(spans, 'chat gpt-4o')]);
    expect(unread?.message).toContain(why);
    expect(evaluate(trajectory, NO_TOOLS).verdict).toBe('inconclusive');
  });

  it.each([
    [
      'Vercel AI SDK',
      { 'ai.operationId': 'ai.generateText.doGenerate', 'ai.response.finishReason': 'tool-calls' },
    ],
    ['OpenLLMetry', { 'llm.request.type': 'chat', 'gen_ai.completion.0.finish_reason': 'tool_calls' }],
    ['OpenInference', { 'openinference.span.kind': 'LLM', 'gen_ai.response.finish_reasons': '["tool_use"]' }],
  ] as [string, Attributes][])('a %s turn that stopped for tools with no call read', (_, attributes) => {
    const spans = record((tracer, child) => {
      const root = tracer.startSpan('invoke_agent support', { attributes: AGENT });
      span(tracer, 'llm', attributes, child(root));
      root.end();
    });
    const trajectory = trajectoryOf(spans);
    expect(trajectory.turns).toHaveLength(1);
    expect(unreadOf(trajectory)?.spanIds).toEqual([spanIdOf(spans, 'llm')]);
  });

  it("reads a Strands turn's gen_ai.choice event and a nested span of the same generation for the finish reason", () => {
    const spans = record((tracer, child) => {
      const root = tracer.startSpan('invoke_agent support', { attributes: AGENT });
      const strands = tracer.startSpan(
        'chat',
        { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.system': 'strands-agents' } },
        child(root),
      );
      strands.addEvent('gen_ai.choice', { finish_reason: 'tool_use', message: '[{"text": "let me look"}]' });
      strands.end();
      const outer = tracer.startSpan(
        'call_llm',
        { attributes: { 'gen_ai.operation.name': 'chat' } },
        child(root),
      );
      span(
        tracer,
        'openai.chat',
        { 'llm.request.type': 'chat', 'gen_ai.completion.0.finish_reason': 'tool_calls' },
        child(outer),
      );
      outer.end();
      root.end();
    });
    const trajectory = trajectoryOf(spans);
    expect(trajectory.turns).toHaveLength(2);
    expect(unreadOf(trajectory)?.spanIds.sort()).toEqual(
      [spanIdOf(spans, 'chat'), spanIdOf(spans, 'call_llm')].sort(),
    );
  });

  it('a turn that stopped for tools whose call was read is no evidence', () => {
    const ask = { type: 'tool_call', id: 'c1', name: 'issue_refund', arguments: { order: 'A-1' } };
    const spans = agentRun(
      chat([{ role: 'assistant', parts: [ask], finish_reason: 'tool_call' }], {
        'gen_ai.response.finish_reasons': ['tool_call'],
      }),
    );
    const trajectory = trajectoryOf(spans);
    expect(trajectory.calls.map((call) => call.tool)).toEqual(['issue_refund']);
    expect(trajectory.issues).toEqual([]);
    expect(evaluate(trajectory, REFUND_ONLY).verdict).toBe('pass');
  });
});

describe('no false alarm', () => {
  const fixtures = readdirSync(new URL('../spans/', import.meta.url)).filter(
    (name) => name.endsWith('.otlp.json') || name.endsWith('.jsonl'),
  );

  it.each(fixtures)('%s: no unread tool activity, and its own tools allowed pass', (name) => {
    const read = readStoredTraces(readFileSync(new URL(`../spans/${name}`, import.meta.url), 'utf8'), name);
    if (!read.input || read.input.format === 'typed-events') throw new Error(`${name}: not spans`);
    expect(read.errors).toEqual([]);
    for (const trajectory of normalizeSpans(read.input.spans)) {
      expect(unreadOf(trajectory)).toBeUndefined();
      const tools = [...new Set(trajectory.calls.map((call) => call.tool))];
      const scenario = parseScenario({ id: 'its-tools', tools: { allowed: tools } }, 'its-tools');
      expect(evaluate(trajectory, scenario).verdict).toBe('pass');
    }
  });

  itCorpus.each(
    CORPUS_FILES.filter(
      // The logfire OpenAI Agents traces without their convention, and the code agent whose calls
      // in code are read but not what they did, must have it (realworld-corpus.test.ts).
      (file) =>
        !file.startsWith('openai-agents-logfire/') &&
        !file.endsWith('/smolagents-deep-research-managed-agent.otlp.json'),
    ),
  )(`corpus %s: none either${CORPUS_NOTE}`, (file) => {
    for (const trajectory of normalizeSpans(corpusSpans(file))) expect(unreadOf(trajectory)).toBeUndefined();
  });
});

describe('the issue', () => {
  it('names every span once, at most 100, and the first eight in its message', () => {
    const spans = agentRun(chat(TEXT_ANSWER), (tracer, inside) => {
      for (let k = 0; k < 120; k++) span(tracer, `Function: tool_${k}`, {}, inside);
    });
    const unread = unreadOf(trajectoryOf(spans));
    expect(unread?.spanIds).toHaveLength(100);
    expect(new Set(unread?.spanIds).size).toBe(100);
    expect(unread?.message).toContain('and 112 more');
    expect(unread?.message.match(/span [0-9a-f]{16} /g)).toHaveLength(8);
  });

  it('a failed status on an unread tool span changes nothing: it is evidence either way', () => {
    const spans = agentRun(chat(TEXT_ANSWER), (tracer, inside) => {
      const failed = tracer.startSpan('Function: refund', {}, inside);
      failed.setStatus({ code: SpanStatusCode.ERROR, message: 'boom' });
      failed.end();
    });
    expect(unreadOf(trajectoryOf(spans))?.spanIds).toEqual([spanIdOf(spans, 'Function: refund')]);
  });
});

describe('isToolCallFinish', () => {
  // The oracle: a tool finish is one of these once lowercased, trimmed and with `-` as `_`.
  const TOOL_FINISHES = ['tool_calls', 'tool_call', 'tool_use', 'function_call', 'function_calls'];
  const oracle = (reason: string) => TOOL_FINISHES.includes(reason.trim().toLowerCase().replaceAll('-', '_'));

  it('says a reason is a tool finish exactly when its normalized form is one', () => {
    const written = fc.oneof(
      fc.constantFrom(...TOOL_FINISHES, 'stop', 'STOP', 'length', 'end_turn', 'max_tokens', 'content_filter'),
      fc.string(),
    );
    const reasons = fc
      .tuple(written, fc.constantFrom('', ' ', '\t'), fc.boolean(), fc.boolean())
      .map(([reason, pad, upper, dashes]) => {
        const cased = upper ? reason.toUpperCase() : reason;
        return `${pad}${dashes ? cased.replaceAll('_', '-') : cased}${pad}`;
      });
    fc.assert(fc.property(reasons, (reason) => isToolCallFinish(reason) === oracle(reason)));
  });
});
