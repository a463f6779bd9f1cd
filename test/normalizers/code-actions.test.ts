/**
 * Code actions (src/normalizers/code-actions.ts): calls of the agent's tools read from the Python
 * in a model's output, never from strings, comments, attributes or definitions; and a code
 * agent's trace read whole: calls from code as calls, the managed agent's turns as its run, and
 * no rule over the calls passing. The real case is the smolagents deep-research trace
 * (realworld-corpus.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { CODE_ARGUMENTS, codeActions, declaredFunctions } from '../../src/normalizers/code-actions.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { spanRecord, TRACE_ID } from '../helpers/spans.js';

const TOOLS = new Set(['search_agent', 'final_answer']);
const coded = (code: string) => `Thought: go.\n\nCode:\n\`\`\`py\n${code}\n\`\`\``;
const toolsCalled = (text: string) => codeActions(text, TOOLS).requested.map((request) => request.tool);

describe('calls read from code', () => {
  it('reads each call of a tool the agent has, in order, with its argument source as text', () => {
    const actions = codeActions(coded('r = search_agent("find x")\nprint(r)\nfinal_answer(r)'), TOOLS);
    expect(actions.requested).toEqual([
      { tool: 'search_agent', args: { captured: true, value: '"find x"', parseError: CODE_ARGUMENTS } },
      { tool: 'final_answer', args: { captured: true, value: 'r', parseError: CODE_ARGUMENTS } },
    ]);
    expect(actions.unread).toContain('search_agent, final_answer');
  });

  it('reads `<code>` blocks, and a fenced block only after a `Code:` label', () => {
    expect(toolsCalled('<code>\nfinal_answer(1)\n</code>')).toEqual(['final_answer']);
    expect(toolsCalled('Here is how:\n```py\nfinal_answer(1)\n```')).toEqual([]);
  });

  it('reads no call in a string, a comment, an attribute, a definition or another name', () => {
    expect(
      toolsCalled(
        coded(
          [
            'x = "final_answer(1)"',
            "y = '''search_agent(2)'''",
            '# final_answer(3)',
            'obj.final_answer(4)',
            'def final_answer(v):',
            '    pass',
            'my_final_answer(5)',
            'final_answer_2(6)',
          ].join('\n'),
        ),
      ),
    ).toEqual([]);
  });

  it('keeps a call whose parentheses hold strings with parentheses in them', () => {
    const [request] = codeActions(coded('search_agent("a (b", k=")")'), TOOLS).requested;
    expect(request?.args).toMatchObject({ value: '"a (b", k=")"' });
  });

  it('ends a fenced block at a fence starting a line, not at ``` inside a string', () => {
    const [request] = codeActions(coded('search_agent("```")\nfinal_answer(1)'), TOOLS).requested;
    expect(request?.args).toMatchObject({ value: '"```"' });
    expect(toolsCalled(coded('search_agent("```")\nfinal_answer(1)'))).toEqual([
      'search_agent',
      'final_answer',
    ]);
    expect(toolsCalled('Code:\n```py\n```')).toEqual([]);
    expect(toolsCalled('Code:\n```py\nfinal_answer(1)\n  ```\nsearch_agent(2)')).toEqual(['final_answer']);
  });

  it('reads the same calls whatever else the code holds (fast-check)', () => {
    const names = fc.constantFrom('search_agent', 'final_answer', 'print', 'len', 'helper');
    const literal = fc.string({ maxLength: 20 }).map((text) => JSON.stringify(text));
    fc.assert(
      fc.property(fc.array(fc.tuple(names, literal), { maxLength: 8 }), (lines) => {
        const code = lines.map(([name, argument], k) => `v${k} = ${name}(${argument})`).join('\n');
        const expected = lines.filter(([name]) => TOOLS.has(name));
        const read = codeActions(coded(code), TOOLS).requested;
        expect(read.map((request) => request.tool)).toEqual(expected.map(([name]) => name));
        expect(read.map((request) => request.args.captured && request.args.value)).toEqual(
          expected.map(([, argument]) => argument),
        );
      }),
    );
  });

  it('never throws and reads at most 100 calls, on any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => {
        expect(codeActions(coded(text), TOOLS).requested.length).toBeLessThanOrEqual(100);
        expect(codeActions(`<code>${text}`, TOOLS).requested).toEqual([]);
      }),
    );
    expect(codeActions(coded('final_answer(1)\n'.repeat(300)), TOOLS).requested).toHaveLength(100);
  });

  it('finds the tools a prompt declares as Python stubs', () => {
    expect([
      ...declaredFunctions(['Tools:\ndef web_search(query: str) -> str:\n    ...\ndef  no(x)']),
    ]).toEqual(['web_search']);
  });
});

describe('a code agent managing an agent, recorded by its model calls only', () => {
  const STUBS =
    'You act in code. Tools:\n```python\ndef search_agent(task: str) -> str:\ndef final_answer(answer):\n```';

  function modelCall(first: string, history: string[], output: Attributes, start: number): SpanRecord {
    const attributes: Attributes = {
      'openinference.span.kind': 'LLM',
      'llm.input_messages.0.message.role': 'system',
      'llm.input_messages.0.message.content': first,
      'llm.output_messages.0.message.role': 'assistant',
      ...output,
    };
    history.forEach((text, k) => {
      attributes[`llm.input_messages.${k + 1}.message.role`] = k % 2 === 0 ? 'user' : 'assistant';
      attributes[`llm.input_messages.${k + 1}.message.content`] = text;
    });
    return spanRecord({
      name: 'ChatCompletion',
      parentSpanId: ROOT.spanId,
      attributes,
      start,
      end: start + 5,
    });
  }
  const ROOT = spanRecord({ name: 'main', start: 0, end: 100 });
  const text = (content: string): Attributes => ({ 'llm.output_messages.0.message.content': content });

  function trace(): SpanRecord[] {
    const manager = 'You act in code, as the manager.';
    const managed = 'You call tools, as search_agent.';
    return [
      ROOT,
      modelCall(`${manager}\n${STUBS}`, ['task'], text(coded('r = search_agent("find x")\nprint(r)')), 10),
      modelCall(
        managed,
        ['find x'],
        {
          'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'call_w',
          'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'web_search',
          'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"query":"x"}',
        },
        20,
      ),
      modelCall(managed, ['find x', 'Calling tools: web_search', 'Observation:\nx is 4'], text('x is 4'), 30),
      modelCall(
        `${manager}\n${STUBS}`,
        ['task', 'Code: ...', 'Observation:\nx is 4'],
        text(coded('final_answer("4")')),
        50,
      ),
    ];
  }

  it('reads the calls from code, the managed agent as a run under its call, and the order the steps have', () => {
    const trajectory = normalizeTrace(TRACE_ID, trace()) as Trajectory;
    const [ask, search, answer] = ['search_agent', 'web_search', 'final_answer'].map((tool) =>
      trajectory.calls.find((call) => call.tool === tool),
    );
    expect(ask?.outcome).toEqual({ status: 'ok' });
    expect(ask?.result).toEqual({ captured: true, value: 'x is 4' });
    expect(search?.result).toEqual({ captured: true, value: 'x is 4' });
    const sub = trajectory.agents.find((run) => run.name === 'search_agent');
    expect(sub?.parentCallId).toBe(ask?.id);
    expect(sub?.calls).toEqual([search?.id]);
    expect(search?.agentName).toBe('search_agent');
    expect(trajectory.happensBefore(ask as never, answer as never)).toBe(true);
    expect(trajectory.happensBefore(search as never, answer as never)).toBe(true);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual(['unread_tool_activity']);
  });

  it('fails a forbidden tool the code called, and passes no rule that counts the calls', () => {
    const trajectory = normalizeTrace(TRACE_ID, trace()) as Trajectory;
    const findings = (scenario: object) =>
      evaluate(trajectory, parseScenario({ id: 's', ...scenario }, 's')).findings.map((finding) => [
        finding.rule,
        finding.inconclusive === true,
      ]);
    expect(findings({ tools: { forbidden: ['search_agent'] } })).toContainEqual(['tools.forbidden', false]);
    // Named in code, but whether it ran is not in the trace: not a pass.
    expect(findings({ tools: { required: ['search_agent'] } })).toContainEqual(['tools.required', true]);
    expect(findings({ efficiency: { maxCalls: 10 } })).toContainEqual(['efficiency.budget', true]);
  });
});
