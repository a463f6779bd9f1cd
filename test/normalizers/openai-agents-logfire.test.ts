/**
 * The OpenAI Agents SDK (Python) as logfire records it. The three real recordings of the shared
 * corpus (`../shared/corpus/realworld/openai-agents-logfire/`, read where they are; SOURCES.md
 * names them) must read as their spans say: each call the model made with its arguments and
 * outcome, the agent that made it, handoffs, one turn per `Responses API` span, nothing twice.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import type { SpanReading } from '../../src/normalizers/convention.js';
import { normalizeSpans } from '../../src/normalizers/normalize.js';
import { defaultHandoffTool, openAiAgentsLogfire } from '../../src/normalizers/openai-agents-logfire.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { describeCorpus } from '../helpers/corpus.js';
import { fixture, orderedPairs, trajectoryOf } from '../helpers/fixtures.js';
import { spanRecord } from '../helpers/spans.js';

const CORPUS = new URL('../../../shared/corpus/realworld/openai-agents-logfire/', import.meta.url);
const SCOPE = { name: 'logfire.openai_agents' };

function corpusSpans(name: string): SpanRecord[] {
  const read = readStoredTraces(readFileSync(new URL(`${name}.otlp.json`, CORPUS), 'utf8'), name);
  if (read.input?.format !== 'otlp-json' || read.errors.length > 0)
    throw new Error(`${name}: ${JSON.stringify(read.errors)}`);
  return read.input.spans;
}

/** The corpus trace's one agent trajectory (its other traces, if any, have no agent spans). */
function corpusTrajectory(name: string): Trajectory {
  const trajectories = normalizeSpans(corpusSpans(name));
  expect(trajectories).toHaveLength(1);
  return trajectories[0] as Trajectory;
}

/** What a person reads off a call: tool, id, arguments, result, outcome, agent, issuing turn's span. */
function reading(trajectory: Trajectory) {
  return trajectory.calls.map((call) => ({
    tool: call.tool,
    callId: call.callId,
    args: call.args,
    result: call.result,
    outcome: call.outcome,
    agent: call.agentName,
    turnSpan: trajectory.turns.find((turn) => turn.id === call.turnId)?.spanId,
    convention: call.convention,
  }));
}

const captured = (value: unknown) => ({ captured: true, value });

describeCorpus('the corpus traces of the OpenAI Agents SDK under logfire', () => {
  it('responses-tool-then-handoff: random_number and the handoff to agent2 in one turn, then agent2', () => {
    const trajectory = corpusTrajectory('responses-tool-then-handoff');
    expect(trajectory.issues).toEqual([]);
    expect(reading(trajectory)).toEqual([
      {
        tool: 'random_number',
        callId: 'call_vwqy7HyGGnNht9NNfxMnnouY',
        args: captured({}),
        result: captured(4),
        outcome: { status: 'ok' },
        agent: 'agent1',
        turnSpan: '0000000000000009',
        convention: 'openai-agents-logfire',
      },
      {
        tool: 'transfer_to_agent2',
        callId: 'call_oEA0MnUXCwKevx8txteoopNL',
        args: captured({}),
        // What agent2's model was shown as the transfer's output.
        result: captured({ assistant: 'agent2' }),
        outcome: { status: 'ok' },
        agent: 'agent1',
        turnSpan: '0000000000000009',
        convention: 'openai-agents-logfire',
      },
    ]);
    // One response asked for both: neither is before the other.
    expect(orderedPairs(trajectory)).toEqual([]);
    const [, transfer] = trajectory.calls;
    const agent2 = trajectory.agents.find((run) => run.name === 'agent2');
    expect(transfer?.handoff).toEqual({
      targetName: 'agent2',
      targetType: 'agent',
      mode: 'pass_control',
      targetRunId: agent2?.id,
    });
    expect(agent2?.handoffCallId).toBe(transfer?.id);
    // One turn per Responses span, agent1's first; agent2's was shown both results.
    expect(trajectory.turns.map((turn) => [turn.spanId, turn.runId])).toEqual([
      ['0000000000000009', 'run:0000000000000005'],
      ['0000000000000013', 'run:000000000000000f'],
    ]);
    expect(trajectory.turns[1]?.consumed).toEqual([
      'call_vwqy7HyGGnNht9NNfxMnnouY',
      'call_oEA0MnUXCwKevx8txteoopNL',
    ]);
    expect(trajectory.turns[1]?.usage).toEqual({ inputTokens: 89, outputTokens: 18 });
    expect(trajectory.root?.agentName).toBe('agent1');
  });

  it('function-tool-exception: the tool raised, the model was told, and tried nothing else', () => {
    const trajectory = corpusTrajectory('function-tool-exception');
    expect(trajectory.issues).toEqual([]);
    const told =
      "An error occurred while running the tool. Please try again. Error: Ouch, don't do that again!";
    expect(reading(trajectory)).toEqual([
      {
        tool: 'tool',
        callId: 'call_OpJ32C09GImFzxYLe01MiOOd',
        args: captured({}),
        result: captured(told),
        outcome: { status: 'error', errorType: 'RuntimeError', message: "Ouch, don't do that again!" },
        agent: 'Start Agent',
        turnSpan: '0000000000000009',
        convention: 'openai-agents-logfire',
      },
    ]);
    expect(
      trajectory.turns.map((turn) => ({ span: turn.spanId, issued: turn.issued, consumed: turn.consumed })),
    ).toEqual([
      { span: '0000000000000009', issued: ['call_OpJ32C09GImFzxYLe01MiOOd'], consumed: [] },
      { span: '000000000000000f', issued: [], consumed: ['call_OpJ32C09GImFzxYLe01MiOOd'] },
    ]);
  });

  it('mcp-random-number: the MCP tool is one call, however many MCP spans record it', () => {
    const trajectory = corpusTrajectory('mcp-random-number');
    expect(trajectory.issues).toEqual([]);
    expect(reading(trajectory)).toEqual([
      {
        tool: 'random_number',
        callId: 'call_jfYaCkab5PQtyNrcrSgMdlRf',
        args: captured({}),
        result: captured({ type: 'text', text: '4' }),
        outcome: { status: 'ok' },
        agent: 'Assistant',
        turnSpan: '0000000000000011',
        convention: 'openai-agents-logfire',
      },
    ]);
    expect(trajectory.turns).toHaveLength(2);
    expect(trajectory.turns[1]?.consumed).toEqual(['call_jfYaCkab5PQtyNrcrSgMdlRf']);
  });

  it.each([
    ['responses-tool-then-handoff', ['random_number', 'transfer_to_agent2']],
    ['function-tool-exception', ['tool']],
    ['mcp-random-number', ['random_number']],
  ])('%s: a scenario that allows no such tool fails on the calls, naming them', (name, tools) => {
    const trajectory = corpusTrajectory(name);
    const scenario = parseScenario({ id: 'only-lookups', tools: { allowed: ['lookup'] } }, 'only-lookups');
    const report = evaluate(trajectory, scenario);
    expect(report.verdict).toBe('fail');
    const unauthorized = report.findings.filter((finding) => finding.rule === 'tools.allowed');
    const named = unauthorized.flatMap((finding) => finding.calls);
    expect(named.map((id) => trajectory.call(id)?.tool).sort()).toEqual([...tools].sort());
  });
});

function read(fields: Parameters<typeof spanRecord>[0]): SpanReading | undefined {
  return openAiAgentsLogfire.read(spanRecord({ scope: SCOPE, ...fields }));
}

function readCall(fields: Parameters<typeof spanRecord>[0]) {
  const reading = read(fields);
  if (reading?.kind !== 'tool') throw new Error(`read as ${reading?.kind}`);
  return reading.call;
}

function readTurn(fields: Parameters<typeof spanRecord>[0]) {
  const reading = read(fields);
  if (reading?.kind !== 'turn') throw new Error(`read as ${reading?.kind}`);
  return reading.turn;
}

const functionSpan = (attributes: Attributes, fields: Parameters<typeof spanRecord>[0] = {}) => ({
  name: 'Function: {name}',
  ...fields,
  attributes: { 'logfire.msg_template': 'Function: {name}', 'gen_ai.system': 'openai', ...attributes },
});

/** A fixture converted from an older release's snapshot (test/spans/capture/logfire-openai-agents.ts). */
const olderRelease = (name: string) => trajectoryOf(fixture(`logfire-openai-agents-${name}`));

describe("older logfire releases: no Turn spans, a run's spans under its agent span", () => {
  it('responses-handoff: the same reading as the corpus trace, without steps', () => {
    const trajectory = olderRelease('responses-handoff');
    expect(trajectory.issues).toEqual([]);
    expect(
      trajectory.calls.map((call) => [call.tool, call.callId, call.outcome.status, call.agentName]),
    ).toEqual([
      ['random_number', 'call_vwqy7HyGGnNht9NNfxMnnouY', 'ok', 'agent1'],
      ['transfer_to_agent2', 'call_oEA0MnUXCwKevx8txteoopNL', 'ok', 'agent1'],
    ]);
    expect(orderedPairs(trajectory)).toEqual([]);
    const agent2 = trajectory.agents.find((run) => run.name === 'agent2');
    expect(trajectory.calls[1]?.handoff?.targetRunId).toBe(agent2?.id);
    expect(trajectory.turns.map((turn) => turn.issued.length)).toEqual([2, 0]);
  });

  it('file-search: a hosted tool is a call, once, though the next run is shown it again', () => {
    const trajectory = olderRelease('file-search');
    expect(trajectory.issues).toEqual([]);
    expect(reading(trajectory)).toEqual([
      {
        tool: 'file_search',
        callId: 'fs_67ceff3ab5b081919945a1b5a1185949',
        args: captured({ queries: ['Who made Logfire?'] }),
        result: { captured: false },
        outcome: { status: 'ok' },
        agent: 'agent',
        turnSpan: '0000000000000005',
        convention: 'openai-agents-logfire',
      },
    ]);
    // Two Runner.run calls in one trace: two runs of the agent, one turn each.
    expect(trajectory.agents.filter((run) => run.name === 'agent').map((run) => run.turns.length)).toEqual([
      1, 1,
    ]);
  });

  it('chat-completion: a plain answer is one turn and no call', () => {
    const trajectory = olderRelease('chat-completion');
    expect(trajectory.calls).toEqual([]);
    expect(trajectory.turns).toEqual([
      expect.objectContaining({ model: 'gpt-4o', usage: { inputTokens: 11, outputTokens: 8 }, issued: [] }),
    ]);
  });
});

describe('openai-agents-logfire spans', () => {
  it('a tool that failed without an exception event takes its message from the SDK error', () => {
    const call = readCall(
      functionSpan(
        {
          name: 'issue_refund',
          input: '{"order_id":"A-1"}',
          error: JSON.stringify({
            message: 'Error running tool (non-fatal)',
            data: { error: 'gateway down' },
          }),
        },
        { status: { code: 'error' } },
      ),
    );
    expect(call).toMatchObject({
      tool: 'issue_refund',
      args: captured({ order_id: 'A-1' }),
      result: { captured: false },
      outcome: { status: 'error', message: 'gateway down' },
    });
  });

  it('a JSON output is read as JSON, text stays text, and arguments the SDK kept out are not captured', () => {
    expect(readCall(functionSpan({ name: 'get_order', output: '{"total":49.99}' })).result).toEqual(
      captured({ total: 49.99 }),
    );
    const text = readCall(functionSpan({ name: 'send', output: 'sent via email' }));
    expect(text.result).toEqual(captured('sent via email'));
    expect(text.args).toEqual({ captured: false });
  });

  it('a handoff span is the SDK transfer tool, handing off to its target; the arrow may be ->', () => {
    const call = readCall({
      name: 'Handoff: {from_agent} → {to_agent}',
      attributes: {
        'logfire.msg_template': 'Handoff: {from_agent} → {to_agent}',
        from_agent: 'triage',
        to_agent: 'Billing Agent',
      },
    });
    expect(call).toMatchObject({
      tool: 'transfer_to_billing_agent',
      agentName: 'triage',
      handoff: { targetName: 'Billing Agent', targetType: 'agent', mode: 'pass_control' },
    });
    const fromMessage = readCall({
      name: 'Handoff: {from_agent} -> {to_agent}',
      attributes: { 'logfire.msg': 'Handoff: triage -> billing' },
    });
    expect(fromMessage.handoff?.targetName).toBe('billing');
    expect(defaultHandoffTool('Réfund-desk 2')).toBe('transfer_to_r_fund_desk_2');
  });

  it('a Responses span with its response reads the calls from the output items, hosted tools too', () => {
    const turn = readTurn({
      name: 'Responses API with {gen_ai.request.model!r}',
      attributes: {
        'gen_ai.request.model': 'gpt-4o',
        raw_input: JSON.stringify([{ role: 'user', content: 'Who made Logfire?' }]),
        response: JSON.stringify({
          output: [
            { type: 'reasoning', id: 'rs_1', summary: [] },
            {
              type: 'file_search_call',
              id: 'fs_1',
              queries: ['Who made Logfire?'],
              status: 'completed',
              results: null,
            },
            {
              type: 'function_call',
              id: 'fc_1',
              call_id: 'call_1',
              name: 'get_order',
              arguments: '{"id":"A-1"}',
            },
            {
              type: 'mcp_call',
              id: 'mcp_1',
              name: 'roll',
              server_label: 'dice',
              arguments: '{"sides":6}',
              output: '4',
            },
          ],
        }),
      },
    });
    const ok = { outcome: { status: 'ok' } };
    expect(turn.requested).toEqual([
      {
        tool: 'file_search',
        callId: 'fs_1',
        args: captured({ queries: ['Who made Logfire?'] }),
        // A server-side call: its item says it completed; no result was recorded.
        ended: { ...ok, result: { captured: false } },
      },
      { tool: 'get_order', callId: 'call_1', args: captured({ id: 'A-1' }) },
      {
        tool: 'roll',
        callId: 'mcp_1',
        args: captured({ sides: 6 }),
        ended: { ...ok, result: captured(4) },
        // A hosted MCP call names its server by label.
        mcpServer: { name: 'dice' },
      },
    ]);
    expect(turn.model).toBe('gpt-4o');
  });

  it('without the response, the calls are the output events after the instructions and the input', () => {
    const events = [
      { 'event.name': 'gen_ai.system.message', content: 'Be brief', role: 'system' },
      { 'event.name': 'gen_ai.user.message', content: 'a', role: 'user' },
      { 'event.name': 'gen_ai.user.message', content: 'b', role: 'user' },
      {
        'event.name': 'gen_ai.assistant.message',
        role: 'assistant',
        tool_calls: [{ id: 'c0', type: 'function', function: { name: 'earlier', arguments: '{}' } }],
      },
      { 'event.name': 'gen_ai.tool.message', role: 'tool', id: 'c0', content: '{"x":1}', name: 'earlier' },
      {
        'event.name': 'gen_ai.assistant.message',
        role: 'assistant',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'later', arguments: '{"y":2}' } }],
      },
      {
        'event.name': 'gen_ai.unknown',
        role: 'assistant',
        content: 'web_search_call\n\nSee JSON for details',
        data: { id: 'ws_1', type: 'web_search_call', action: { query: 'x' }, status: 'completed' },
      },
    ];
    const input = [
      // One message with two content parts is two events.
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'a' },
          { type: 'input_text', text: 'b' },
        ],
      },
      { type: 'function_call', call_id: 'c0', name: 'earlier', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c0', output: '{"x":1}' },
    ];
    const turn = readTurn({
      name: 'Responses API with {gen_ai.request.model!r}',
      attributes: { raw_input: JSON.stringify(input), events: JSON.stringify(events) },
    });
    expect(turn.requested).toEqual([
      { tool: 'later', callId: 'c1', args: captured({ y: 2 }) },
      {
        tool: 'web_search',
        callId: 'ws_1',
        args: captured({ action: { query: 'x' } }),
        ended: { outcome: { status: 'ok' }, result: { captured: false } },
      },
    ]);
    expect(turn.shown).toEqual([{ callId: 'c0', result: captured({ x: 1 }) }]);
    expect(turn.historyLength).toBe(3);
  });

  it('a Chat completion span reads tool_calls from its output and tool messages from its input', () => {
    const turn = readTurn({
      name: 'Chat completion with {gen_ai.request.model!r}',
      attributes: {
        'gen_ai.system': 'openai',
        input: JSON.stringify([
          { role: 'user', content: 'refund A-1' },
          { role: 'tool', tool_call_id: 'c0', content: '{"total":5}' },
        ]),
        output: JSON.stringify([
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'issue_refund', arguments: '{"amount":5}' } },
            ],
          },
        ]),
      },
    });
    expect(turn.requested).toEqual([{ callId: 'c1', tool: 'issue_refund', args: captured({ amount: 5 }) }]);
    expect(turn.shown).toEqual([{ callId: 'c0', result: captured({ total: 5 }) }]);
  });

  it("claims its templates where the scope was lost, but not another logfire integration's spans", () => {
    const template = {
      'logfire.msg_template': 'Responses API with {gen_ai.request.model!r}',
      'gen_ai.system': 'openai',
    };
    const lost = openAiAgentsLogfire.read(
      spanRecord({ name: 'Responses API with {gen_ai.request.model!r}', attributes: template }),
    );
    expect(lost?.kind).toBe('turn');
    const openAi = openAiAgentsLogfire.read(
      spanRecord({
        name: 'Responses API with {gen_ai.request.model!r}',
        scope: { name: 'logfire.openai' },
        attributes: template,
      }),
    );
    expect(openAi).toBeUndefined();
    expect(
      openAiAgentsLogfire.read(spanRecord({ name: 'Function: {name}', attributes: { name: 'x' } })),
    ).toBeUndefined();
    expect(read({ name: 'Task: Agent workflow', attributes: { sdk_span_type: 'task' } })?.kind).toBe(
      'structure',
    );
  });

  it('turn spans order calls that one millisecond holds, by their number, whatever order they arrived in', () => {
    const agent = spanRecord({
      scope: SCOPE,
      name: 'Agent run: {name!r}',
      start: 0,
      end: 10,
      attributes: { name: 'a' },
    });
    const turn = (n: number) =>
      spanRecord({
        scope: SCOPE,
        name: `Turn {turn} for agent a`,
        parentSpanId: agent.spanId,
        start: 5,
        end: 5,
        attributes: { sdk_span_type: 'turn', turn: String(n), name: 'turn', type: 'custom' },
      });
    const first = turn(1);
    const second = turn(2);
    const call = (tool: string, parent: SpanRecord) =>
      spanRecord({
        scope: SCOPE,
        ...functionSpan({ name: tool, input: '{}' }),
        parentSpanId: parent.spanId,
        start: 5,
        end: 5,
      });
    // The later turn's spans first: arrival order must not decide.
    const trajectory = trajectoryOf([
      call('issue_refund', second),
      second,
      call('get_refund_policy', first),
      first,
      agent,
    ]);
    expect(orderedPairs(trajectory)).toEqual(['get_refund_policy->issue_refund']);
  });
});
