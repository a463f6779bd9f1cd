/**
 * Reading by structure, not by convention: one generation two instrumentation layers recorded
 * as siblings is one turn; where a call's span and its request disagree the request is read; a
 * run under the body of a call no tool span records belongs to that call; one agent recorded by
 * two nested spans is one run. The real cases are in realworld-corpus.test.ts (LangChain with the
 * OpenAI client, AGNTCY over A2A); these are the edges, each of which can fail.
 */
import { describe, expect, it } from 'vitest';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { spanRecord, TRACE_ID, toolSpan } from '../helpers/spans.js';

function trajectoryOf(spans: SpanRecord[]): Trajectory {
  return normalizeTrace(TRACE_ID, spans) as Trajectory;
}

/** An OpenInference LLM span's output: these tool calls (ids optional), or this text. */
function llm(output: { calls?: { id?: string; name: string; args: string }[]; text?: string }): Attributes {
  const attributes: Attributes = {
    'openinference.span.kind': 'LLM',
    'llm.input_messages.0.message.role': 'user',
    'llm.input_messages.0.message.content': 'What is new?',
    'llm.output_messages.0.message.role': 'assistant',
  };
  if (output.text !== undefined) attributes['llm.output_messages.0.message.content'] = output.text;
  (output.calls ?? []).forEach((call, k) => {
    const at = `llm.output_messages.0.message.tool_calls.${k}.tool_call`;
    if (call.id) attributes[`${at}.id`] = call.id;
    attributes[`${at}.function.name`] = call.name;
    attributes[`${at}.function.arguments`] = call.args;
  });
  return attributes;
}

const LANGCHAIN = { name: 'openinference.instrumentation.langchain' };
const OPENAI = { name: 'openinference.instrumentation.openai' };

/** A chain's model span, and the provider client's span of the same generation under the root. */
function twoLayers(framework: Attributes, provider: Attributes, times = { outer: [1, 9], inner: [2, 8] }) {
  const root = spanRecord({ name: 'main', start: 0, end: 100 });
  const agent = spanRecord({
    name: 'AgentExecutor',
    parentSpanId: root.spanId,
    scope: LANGCHAIN,
    attributes: { 'openinference.span.kind': 'AGENT' },
    start: 0,
    end: 99,
  });
  const outer = spanRecord({
    name: 'ChatOpenAI',
    parentSpanId: agent.spanId,
    scope: LANGCHAIN,
    attributes: framework,
    start: times.outer[0],
    end: times.outer[1],
  });
  const inner = spanRecord({
    name: 'ChatCompletion',
    parentSpanId: root.spanId,
    scope: OPENAI,
    attributes: provider,
    start: times.inner[0],
    end: times.inner[1],
  });
  return { root, agent, outer, inner };
}

describe('one generation recorded by two layers, wherever the provider span sits', () => {
  const search = '{"q":"trends"}';

  it("is one turn, in the framework span's run, with the id only the provider recorded", () => {
    const { root, agent, outer, inner } = twoLayers(
      llm({ calls: [{ name: 'search', args: search }] }),
      llm({ calls: [{ id: 'call_1', name: 'search', args: search }] }),
    );
    const trajectory = trajectoryOf([root, agent, outer, inner]);
    expect(trajectory.turns.map((turn) => turn.spanId)).toEqual([outer.spanId]);
    expect(trajectory.turns[0]?.issued).toEqual(['call_1']);
    expect(trajectory.calls.map((call) => [call.id, call.agentName])).toEqual([['call_1', 'AgentExecutor']]);
    expect(trajectory.issues).toEqual([]);
  });

  it('stays two turns when the provider span is not within the framework span in time', () => {
    const { root, agent, outer, inner } = twoLayers(
      llm({ calls: [{ name: 'search', args: search }] }),
      llm({ calls: [{ id: 'call_1', name: 'search', args: search }] }),
      { outer: [1, 9], inner: [5, 12] },
    );
    expect(trajectoryOf([root, agent, outer, inner]).turns).toHaveLength(2);
  });

  it('stays two turns when the two say different things: other arguments, or another answer', () => {
    const other = twoLayers(
      llm({ calls: [{ name: 'search', args: search }] }),
      llm({ calls: [{ name: 'search', args: '{"q":"other"}' }] }),
    );
    expect(trajectoryOf(Object.values(other)).turns).toHaveLength(2);
    const texts = twoLayers(llm({ text: 'yes' }), llm({ text: 'no' }));
    expect(trajectoryOf(Object.values(texts)).turns).toHaveLength(2);
    const same = twoLayers(llm({ text: 'yes' }), llm({ text: 'yes' }));
    expect(trajectoryOf(Object.values(same)).turns).toHaveLength(1);
  });

  it('stays two turns from one instrumentation scope (two concurrent generations of one layer)', () => {
    const { root, agent, outer, inner } = twoLayers(llm({ text: 'yes' }), llm({ text: 'yes' }));
    expect(trajectoryOf([root, agent, outer, { ...inner, scope: LANGCHAIN }]).turns).toHaveLength(2);
  });

  it('stays two turns when the inner one is a model called from inside a tool', () => {
    const { root, agent, outer, inner } = twoLayers(llm({ text: 'yes' }), llm({ text: 'yes' }));
    const tool = toolSpan('summarize', { parentSpanId: root.spanId, callId: 'c9', start: 1, end: 9 });
    expect(
      trajectoryOf([root, agent, outer, tool, { ...inner, parentSpanId: tool.spanId }]).turns,
    ).toHaveLength(2);
  });
});

describe('a call read twice that disagrees', () => {
  function withToolInput(input: string) {
    const agent = spanRecord({ name: 'agent', attributes: { 'openinference.span.kind': 'AGENT' }, end: 50 });
    const turn = spanRecord({
      name: 'ChatOpenAI',
      parentSpanId: agent.spanId,
      attributes: llm({ calls: [{ id: 'call_1', name: 'search', args: '{"q":"trends"}' }] }),
      start: 1,
      end: 5,
    });
    const tool = spanRecord({
      name: 'search',
      parentSpanId: agent.spanId,
      attributes: {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'search',
        'tool_call.id': 'call_1',
        'input.value': input,
        'output.value': 'done',
      },
      start: 6,
      end: 7,
    });
    return trajectoryOf([agent, turn, tool]);
  }

  it('reads the arguments the model asked for over a Python repr, and says nothing is unparsable', () => {
    const trajectory = withToolInput("{'q': 'trends'}");
    expect(trajectory.calls[0]?.args).toEqual({ captured: true, value: { q: 'trends' } });
    expect(trajectory.issues).toEqual([]);
  });

  it('reads the request over a wrapper around the arguments', () => {
    const trajectory = withToolInput('{"input_str":"{\'q\': \'trends\'}","tags":[]}');
    expect(trajectory.calls[0]?.args).toEqual({ captured: true, value: { q: 'trends' } });
  });

  it("keeps the span's arguments when they agree", () => {
    expect(withToolInput('{"q":"trends"}').calls[0]?.args).toEqual({
      captured: true,
      value: { q: 'trends' },
    });
  });
});

describe('a sub-agent under a call no tool span records', () => {
  /** A supervisor turn asking for `ask_detector`, the detector's run later, and the next turn. */
  function supervisor(runTimes: [number, number], calls = [{ id: 'toolu_1', name: 'ask_detector' }]) {
    const genai = (parts: unknown[], shown?: unknown[]): Attributes => ({
      'gen_ai.operation.name': 'chat',
      'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts }]),
      ...(shown && { 'gen_ai.input.messages': JSON.stringify(shown) }),
    });
    const root = spanRecord({ name: 'supervisor', start: 0, end: 100 });
    const ask = spanRecord({
      name: 'chat',
      parentSpanId: root.spanId,
      attributes: genai(
        calls.map((call) => ({ type: 'tool_call', id: call.id, name: call.name, arguments: {} })),
      ),
      start: 1,
      end: 9,
    });
    const body = spanRecord({
      name: 'send_to_detector.agent',
      parentSpanId: root.spanId,
      start: 10,
      end: 60,
    });
    const run = spanRecord({
      name: 'invoke_agent detector',
      parentSpanId: body.spanId,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'detector' },
      start: runTimes[0],
      end: runTimes[1],
    });
    const workflow = spanRecord({
      name: 'detector.workflow',
      parentSpanId: run.spanId,
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'detector' },
      start: runTimes[0],
      end: runTimes[1],
    });
    const inner = spanRecord({
      name: 'chat',
      parentSpanId: workflow.spanId,
      attributes: genai([{ type: 'text', content: 'all up' }]),
      start: runTimes[0] + 1,
      end: runTimes[0] + 2,
    });
    const answer = spanRecord({
      name: 'chat',
      parentSpanId: root.spanId,
      attributes: genai(
        [{ type: 'text', content: 'done' }],
        calls.map((call) => ({
          role: 'tool',
          parts: [{ type: 'tool_call_response', id: call.id, response: 'all up' }],
        })),
      ),
      start: 70,
      end: 80,
    });
    return { spans: [root, ask, body, run, workflow, inner, answer], run, workflow };
  }

  it('puts the run between the request and the next turn under that call, as one run for its two spans', () => {
    const { spans, run } = supervisor([20, 50]);
    const trajectory = trajectoryOf(spans);
    const detector = trajectory.agents.filter((agent) => agent.name === 'detector');
    expect(detector.map((agent) => [agent.id, agent.parentCallId])).toEqual([
      [`run:${run.spanId}`, 'toolu_1'],
    ]);
    expect(detector[0]?.turns).toHaveLength(1);
  });

  it("leaves it under no call when it is not within the call's time", () => {
    const trajectory = trajectoryOf(supervisor([5, 50]).spans);
    expect(trajectory.agents.find((agent) => agent.name === 'detector')?.parentCallId).toBeUndefined();
  });

  it('leaves it under no call when the turn asked for two such calls: which one is not said', () => {
    const trajectory = trajectoryOf(
      supervisor(
        [20, 50],
        [
          { id: 'toolu_1', name: 'ask_detector' },
          { id: 'toolu_2', name: 'ask_detector' },
        ],
      ).spans,
    );
    expect(trajectory.agents.find((agent) => agent.name === 'detector')?.parentCallId).toBeUndefined();
  });
});
