import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { referenceFamily, trajectoryTurns } from '../../src/evaluate/reference.js';
import { readReferenceMessages } from '../../src/evaluate/reference-messages.js';
import type { RuleResult } from '../../src/evaluate/rule.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import { type CallTiming, type ToolCall, Trajectory } from '../../src/model/trajectory.js';
import { normalizeSpans } from '../../src/normalizers/normalize.js';
import { trajectoryFromTypedEvents } from '../../src/normalizers/typed-events.js';
import type { ReferenceSection } from '../../src/scenario/native.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { buildTrajectory, NOT_CAPTURED } from '../helpers/trajectory.js';

/** The section as a scenario file gives it, through the real schema (defaults included). */
function section(reference: Record<string, unknown>): ReferenceSection {
  const parsed = parseScenario({ reference }, 'reference.json').rules.reference;
  if (!parsed) throw new Error('no reference section');
  return parsed;
}

function check(trajectory: Trajectory, reference: Record<string, unknown>): RuleResult {
  const [result, ...rest] = referenceFamily(trajectory, section(reference));
  expect(rest).toEqual([]);
  if (!result) throw new Error('no result');
  return result;
}

const ids = (result: RuleResult) => result.calls.map((call) => call.id);
const summary = (result: RuleResult) => ({ rule: result.rule, status: result.status, reason: result.reason });

function refundFixture(): Trajectory {
  const path = new URL('../spans/vercel-ai-v7-genai-refund.otlp.json', import.meta.url);
  const read = readStoredTraces(readFileSync(path, 'utf8'), 'vercel-ai-v7-genai-refund');
  if (read.input?.format !== 'otlp-json') throw new Error(JSON.stringify(read.errors));
  const [trajectory] = normalizeSpans(read.input.spans);
  if (!trajectory) throw new Error('no trajectory');
  return trajectory;
}

const refund = (amount: number) => ({ tool: 'issue_refund', args: { amount } });

describe('reference: unordered', () => {
  it('passes the same calls in another order and another turn structure', () => {
    const trajectory = buildTrajectory(['get_order', ['get_policy', 'issue_refund']]);
    const result = check(trajectory, {
      mode: 'unordered',
      turns: [[{ tool: 'issue_refund' }], [{ tool: 'get_policy' }, { tool: 'get_order' }]],
    });
    expect(result).toMatchObject({ rule: 'reference.unordered', name: 'reference', dimension: 'order' });
    expect(result.status).toBe('pass');
    expect(result.reason).toBe('');
    expect(ids(result)).toEqual(['c1', 'c2', 'c3']);
  });

  it('names the reference call without a match, its closest call, and how much matched', () => {
    const trajectory = buildTrajectory(['get_order', refund(45)]);
    const result = check(trajectory, { mode: 'unordered', turns: [[{ tool: 'get_order' }], [refund(40)]] });
    expect(summary(result)).toEqual({
      rule: 'reference.unordered',
      status: 'fail',
      reason:
        'reference call #2 issue_refund {"amount":40} has no match; closest: call c2 issue_refund ' +
        'amount: expected 40, saw 45; matched 1 of 2 reference calls and 1 of 2 calls',
    });
    expect(ids(result)).toEqual(['c2']);
  });

  it('fails a repeated call the reference has once, naming the call it was paired with', () => {
    const result = check(buildTrajectory(['get_order', 'get_order']), {
      mode: 'unordered',
      turns: [[{ tool: 'get_order' }]],
    });
    expect(result.reason).toBe(
      'call c2 get_order {} is not in the reference; closest: reference call #1 get_order, already ' +
        'paired with call c1; matched 1 of 1 reference calls and 1 of 2 calls',
    );
    expect(ids(result)).toEqual(['c2']);
  });
});

describe('reference: superset', () => {
  it('passes when every reference call is there, extra calls allowed', () => {
    const trajectory = buildTrajectory(['get_order', 'get_policy', refund(40)]);
    const result = check(trajectory, { mode: 'superset', turns: [[refund(40)], [{ tool: 'get_order' }]] });
    expect(result.status).toBe('pass');
    expect(ids(result)).toEqual(['c1', 'c3']);
  });

  it('fails when a reference tool was never called', () => {
    const result = check(buildTrajectory(['get_order']), {
      mode: 'superset',
      turns: [[{ tool: 'get_order' }], [{ tool: 'send_confirmation' }]],
    });
    expect(summary(result)).toEqual({
      rule: 'reference.superset',
      status: 'fail',
      reason:
        'reference call #2 send_confirmation has no match: no send_confirmation call; matched 1 of 2 reference calls',
    });
    expect(ids(result)).toEqual([]);
  });

  it('counts duplicates: one call cannot stand for two reference calls', () => {
    const trajectory = buildTrajectory([refund(40), refund(45), 'get_order', 'get_order']);
    const result = check(trajectory, {
      mode: 'superset',
      turns: [[refund(40)], [refund(40)], [{ tool: 'get_order' }], [{ tool: 'get_order' }]],
    });
    expect(result.reason).toBe(
      'reference call #2 issue_refund {"amount":40} has no match; closest: call c2 issue_refund ' +
        'amount: expected 40, saw 45; matched 3 of 4 reference calls',
    );
    expect(ids(result)).toEqual(['c2']);
  });

  it('finds the pairing first fit misses (a loose reference call taking the only exact match)', () => {
    // First fit pairs reference #1 (any lookup) with c1, and #2 (id 1) has nothing left.
    const trajectory = buildTrajectory([
      { tool: 'lookup', args: { id: 1 } },
      { tool: 'lookup', args: { id: 2 } },
    ]);
    const turns = [[{ tool: 'lookup', args: {} }], [{ tool: 'lookup', args: { id: 1 } }]];
    expect(check(trajectory, { mode: 'superset', argsMode: 'superset', turns }).status).toBe('pass');
    expect(check(trajectory, { mode: 'unordered', argsMode: 'superset', turns }).status).toBe('pass');
    expect(check(trajectory, { mode: 'strict', argsMode: 'superset', turns }).status).toBe('fail');
  });
});

describe('reference: subset', () => {
  it('passes when every call is in the reference, reference calls may be missing', () => {
    const trajectory = buildTrajectory(['get_order', refund(40)]);
    const result = check(trajectory, {
      mode: 'subset',
      turns: [[{ tool: 'get_order' }, { tool: 'get_policy' }], [refund(40)]],
    });
    expect(result.status).toBe('pass');
    expect(ids(result)).toEqual(['c1', 'c2']);
  });

  it('fails a call outside the reference', () => {
    const trajectory = buildTrajectory([
      'get_order',
      { tool: 'delete_account', args: { id: 'A1' } },
      refund(40),
    ]);
    const result = check(trajectory, { mode: 'subset', turns: [[{ tool: 'get_order' }], [refund(40)]] });
    expect(summary(result)).toEqual({
      rule: 'reference.subset',
      status: 'fail',
      reason:
        'call c2 delete_account {"id":"A1"} is not in the reference: the reference has no delete_account call; ' +
        'matched 2 of 3 calls',
    });
    expect(ids(result)).toEqual(['c2']);
  });

  it('lists ten unpaired calls and counts the rest, while the result keeps every call', () => {
    const trajectory = buildTrajectory(
      Array.from({ length: 13 }, (_, index) => ({ tool: 'ping', args: { n: index } })),
    );
    const result = check(trajectory, { mode: 'subset', turns: [] });
    const listed = Array.from(
      { length: 10 },
      (_, index) =>
        `call c${index + 1} ping {"n":${index}} is not in the reference: the reference has no ping call`,
    );
    expect(result.reason).toBe(`${listed.join('; ')}; and 3 more; matched 0 of 13 calls`);
    expect(result.calls).toHaveLength(13);
  });

  it('fails a call whose arguments match no reference call, naming the closest', () => {
    const result = check(buildTrajectory([refund(45)]), { mode: 'subset', turns: [[refund(40)]] });
    expect(result.reason).toBe(
      'call c1 issue_refund {"amount":45} is not in the reference; closest: reference call #1 ' +
        'issue_refund amount: expected 40, saw 45; matched 0 of 1 calls',
    );
  });
});

describe('reference: strict', () => {
  it('passes the same turns in the same order, calls inside a turn in any order', () => {
    const trajectory = buildTrajectory([['get_order', 'get_policy'], refund(40)]);
    const result = check(trajectory, {
      mode: 'strict',
      turns: [[{ tool: 'get_policy' }, { tool: 'get_order' }], [refund(40)]],
    });
    expect(summary(result)).toEqual({ rule: 'reference.strict', status: 'pass', reason: '' });
    expect(ids(result)).toEqual(['c1', 'c2', 'c3']);
  });

  it('fails parallel calls made one after the other, saying which turn diverged', () => {
    const trajectory = buildTrajectory(['get_order', 'get_policy', refund(40)]);
    const result = check(trajectory, {
      mode: 'strict',
      turns: [[{ tool: 'get_order' }, { tool: 'get_policy' }], [refund(40)]],
    });
    expect(result.reason).toBe(
      'turn 1: expected [get_order, get_policy], saw [get_order] (call c1); matched 0 of 2 reference turns; ' +
        'the reference has 2 turns, the trace 3',
    );
    expect(ids(result)).toEqual(['c1']);
  });

  it('fails a turn with an extra call', () => {
    const trajectory = buildTrajectory(['get_order', ['issue_refund', 'get_order'], 'send']);
    const result = check(trajectory, {
      mode: 'strict',
      turns: [[{ tool: 'get_order' }], [{ tool: 'issue_refund' }], [{ tool: 'send' }]],
    });
    expect(result.reason).toBe(
      'turn 2: expected [issue_refund], saw [issue_refund, get_order] (calls c2, c3); matched 2 of 3 reference turns',
    );
    expect(ids(result)).toEqual(['c2', 'c3']);
  });

  it('fails a turn whose tools agree but whose arguments do not', () => {
    const trajectory = buildTrajectory(['get_order', refund(45)]);
    const result = check(trajectory, { mode: 'strict', turns: [[{ tool: 'get_order' }], [refund(40)]] });
    expect(result.reason).toBe(
      'turn 2: expected [issue_refund], saw [issue_refund] (call c2): reference call #2 issue_refund ' +
        '{"amount":40} has no match; closest: call c2 issue_refund amount: expected 40, saw 45; ' +
        'matched 1 of 2 reference turns',
    );
  });

  it('fails a missing last turn and an extra one', () => {
    const turns = [[{ tool: 'get_order' }], [{ tool: 'send' }]];
    expect(check(buildTrajectory(['get_order']), { mode: 'strict', turns }).reason).toBe(
      'turn 2: expected [send], saw no turn; matched 1 of 2 reference turns; the reference has 2 turns, the trace 1',
    );
    const extra = check(buildTrajectory(['get_order', 'send', 'send_email']), { mode: 'strict', turns });
    expect(extra.reason).toBe(
      'turn 3: expected no turn, saw [send_email] (call c3); matched 2 of 2 reference turns; ' +
        'the reference has 2 turns, the trace 3',
    );
    expect(ids(extra)).toEqual(['c3']);
  });

  it('takes each call as its own turn when the trajectory has no turns', () => {
    const calls: ToolCall[] = ['get_order', 'get_policy'].map((tool, index) => ({
      id: `x${index + 1}`,
      tool,
      args: { captured: true, value: {} },
      result: { captured: false },
      outcome: { status: 'ok' },
      convention: 'test',
    }));
    const timing = new Map<string, CallTiming>([
      ['x1', { issuedAt: 0n, completedAt: 1n }],
      ['x2', { issuedAt: 2n, completedAt: 3n }],
    ]);
    const trajectory = new Trajectory({ traceId: 't', calls, timing });
    expect(trajectoryTurns(trajectory).map((turn) => turn.map((call) => call.id))).toEqual([['x1'], ['x2']]);
    expect(
      check(trajectory, { mode: 'strict', turns: [[{ tool: 'get_order' }], [{ tool: 'get_policy' }]] })
        .status,
    ).toBe('pass');
    expect(
      check(trajectory, { mode: 'strict', turns: [[{ tool: 'get_order' }, { tool: 'get_policy' }]] }).reason,
    ).toBe(
      'turn 1: expected [get_order, get_policy], saw [get_order] (call x1); matched 0 of 1 reference turns; ' +
        'the reference has 1 turn, the trace 2',
    );
  });

  it('passes an empty reference against a trajectory without calls, in every mode', () => {
    for (const mode of ['strict', 'unordered', 'subset', 'superset']) {
      expect(check(buildTrajectory([]), { mode, turns: [] }).status).toBe('pass');
    }
  });
});

describe('reference: argument modes', () => {
  const trajectory = buildTrajectory([{ tool: 'issue_refund', args: { orderId: 'A1', amount: 40 } }]);
  const reference = (args: Record<string, unknown>) => [[{ tool: 'issue_refund', args }]];

  it('exact: every key and value, nothing more', () => {
    expect(
      check(trajectory, { mode: 'unordered', turns: reference({ amount: 40, orderId: 'A1' }) }).status,
    ).toBe('pass');
    expect(check(trajectory, { mode: 'unordered', turns: reference({ amount: 40 }) }).reason).toBe(
      'reference call #1 issue_refund {"amount":40} has no match; closest: call c1 issue_refund ' +
        'extra key orderId (saw "A1"); matched 0 of 1 reference calls and 0 of 1 calls',
    );
  });

  it('ignore: any arguments', () => {
    expect(
      check(trajectory, { mode: 'unordered', argsMode: 'ignore', turns: reference({ amount: 1 }) }).status,
    ).toBe('pass');
  });

  it("superset: the call has at least the reference's arguments", () => {
    const superset = { mode: 'unordered', argsMode: 'superset' };
    expect(check(trajectory, { ...superset, turns: reference({ amount: 40 }) }).status).toBe('pass');
    expect(check(trajectory, { ...superset, turns: reference({ amount: 40, reason: 'late' }) }).reason).toBe(
      'reference call #1 issue_refund {"amount":40,"reason":"late"} has no match; closest: call c1 ' +
        'issue_refund missing key reason (expected "late"); matched 0 of 1 reference calls and 0 of 1 calls',
    );
  });

  it("subset: the call has nothing beyond the reference's arguments", () => {
    const subset = { mode: 'unordered', argsMode: 'subset' };
    expect(
      check(trajectory, { ...subset, turns: reference({ orderId: 'A1', amount: 40, reason: 'late' }) })
        .status,
    ).toBe('pass');
    expect(check(trajectory, { ...subset, turns: reference({ amount: 40 }) }).reason).toContain(
      'closest: call c1 issue_refund extra key orderId (saw "A1")',
    );
  });

  it('argsOverrides: a mode per tool', () => {
    const result = check(trajectory, {
      mode: 'unordered',
      argsOverrides: { issue_refund: 'superset' },
      turns: reference({ amount: 40 }),
    });
    expect(result.status).toBe('pass');
  });

  it('argsOverrides: only the listed paths must be equal, * standing for any one segment', () => {
    const cart = buildTrajectory([
      {
        tool: 'checkout',
        args: {
          cartId: 'K1',
          note: 'leave at door',
          items: [
            { sku: 'A', qty: 1 },
            { sku: 'B', qty: 2 },
          ],
        },
      },
    ]);
    const checkout = (items: unknown[]) => [[{ tool: 'checkout', args: { cartId: 'K1', items } }]];
    const overrides = { checkout: ['cartId', 'items.*.sku'] };
    const same = checkout([{ sku: 'A', qty: 9 }, { sku: 'B' }]);
    expect(check(cart, { mode: 'unordered', argsOverrides: overrides, turns: same }).status).toBe('pass');
    const other = checkout([{ sku: 'A' }, { sku: 'C' }, { sku: 'D' }]);
    expect(check(cart, { mode: 'superset', argsOverrides: overrides, turns: other }).reason).toBe(
      'reference call #1 checkout {"cartId":"K1","items":[{"sku":"A"},{"sku":"C"},{"sku":"D"}]} has no match; ' +
        'closest: call c1 checkout items.1.sku: expected "C", saw "B", missing items.2.sku (expected "D"); ' +
        'matched 0 of 1 reference calls',
    );
  });

  it('a tool named like an Object.prototype member uses argsMode, not the prototype', () => {
    const odd = buildTrajectory([{ tool: 'constructor', args: { a: 2 } }]);
    const result = check(odd, {
      mode: 'unordered',
      argsOverrides: { other: 'ignore' },
      turns: [[{ tool: 'constructor', args: { a: 1 } }]],
    });
    expect(result.reason).toContain('closest: call c1 constructor a: expected 1, saw 2');
  });

  it('a reference call without arguments matches any arguments, even uncaptured ones', () => {
    const uncaptured = buildTrajectory([{ tool: 'issue_refund', args: NOT_CAPTURED }]);
    expect(check(uncaptured, { mode: 'strict', turns: [[{ tool: 'issue_refund' }]] }).status).toBe('pass');
  });
});

describe('reference: arguments that were not captured', () => {
  it('is inconclusive when a pairing exists only if uncaptured arguments agree', () => {
    const trajectory = buildTrajectory(['get_order', { tool: 'issue_refund', args: NOT_CAPTURED }]);
    const result = check(trajectory, { mode: 'superset', turns: [[{ tool: 'get_order' }], [refund(40)]] });
    expect(summary(result)).toEqual({
      rule: 'reference.superset',
      status: 'inconclusive',
      reason:
        'a pairing exists only if arguments that could not be compared agree: call c2 issue_refund as ' +
        'reference call #2 issue_refund {"amount":40} (arguments were not captured); matched 1 of 2 ' +
        'reference calls with arguments compared',
    });
    expect(ids(result)).toEqual(['c2']);
  });

  it('is inconclusive in strict mode too, and for arguments that are not valid JSON', () => {
    const trajectory = buildTrajectory([{ tool: 'issue_refund', args: '{"amount": 4', parseError: 'cut' }]);
    const result = check(trajectory, { mode: 'strict', turns: [[refund(40)]] });
    expect(summary(result)).toEqual({
      rule: 'reference.strict',
      status: 'inconclusive',
      reason:
        'a pairing exists only if arguments that could not be compared agree: call c1 issue_refund as ' +
        'reference call #1 issue_refund {"amount":40} (arguments are not valid JSON (cut), so they cannot ' +
        'be compared); matched 0 of 1 reference turns with arguments compared',
    });
  });

  it('passes when a pairing exists with compared arguments alone', () => {
    const trajectory = buildTrajectory([{ tool: 'issue_refund', args: NOT_CAPTURED }, refund(40)]);
    expect(check(trajectory, { mode: 'superset', turns: [[refund(40)]] }).status).toBe('pass');
    expect(
      check(trajectory, { mode: 'superset', argsMode: 'ignore', turns: [[refund(1), refund(2)]] }).status,
    ).toBe('pass');
  });

  it('fails, not inconclusive, when no pairing exists whatever the uncaptured arguments are', () => {
    const trajectory = buildTrajectory([{ tool: 'issue_refund', args: NOT_CAPTURED }]);
    const result = check(trajectory, { mode: 'superset', turns: [[refund(40)], [{ tool: 'send' }]] });
    expect(summary(result)).toEqual({
      rule: 'reference.superset',
      status: 'fail',
      reason:
        'reference call #2 send has no match: no send call; matched 1 of 2 reference calls (0 with arguments compared)',
    });
  });
});

describe('reference: messages', () => {
  const messages = [
    { role: 'user', content: 'Refund order A1001' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'a',
          type: 'function',
          function: { name: 'get_refund_policy', arguments: '{"orderId":"A1001"}' },
        },
        { id: 'b', type: 'function', function: { name: 'get_order', arguments: '{"orderId":"A1001"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'a', content: '{}' },
    { role: 'tool', tool_call_id: 'b', content: '{}' },
    {
      role: 'assistant',
      tool_calls: [
        {
          id: 'c',
          type: 'function',
          function: { name: 'issue_refund', arguments: '{"orderId":"A1001","amount":42.5}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'c', content: '{}' },
    {
      type: 'ai',
      tool_calls: [{ name: 'send_confirmation', args: { email: 'ana@example.com', refundId: 'R-7781' } }],
    },
    { role: 'assistant', content: 'Done.' },
  ];

  it('reads each assistant message with tool calls as one turn (OpenAI and LangChain shapes)', () => {
    expect(readReferenceMessages(messages)).toEqual({
      ok: true,
      turns: [
        [
          { tool: 'get_refund_policy', args: { orderId: 'A1001' } },
          { tool: 'get_order', args: { orderId: 'A1001' } },
        ],
        [{ tool: 'issue_refund', args: { orderId: 'A1001', amount: 42.5 } }],
        [{ tool: 'send_confirmation', args: { email: 'ana@example.com', refundId: 'R-7781' } }],
      ],
    });
    expect(
      readReferenceMessages([
        { role: 'assistant', tool_calls: [{ function: { name: 'ping', arguments: '' } }] },
      ]),
    ).toEqual({ ok: true, turns: [[{ tool: 'ping', args: {} }]] });
  });

  it('matches the real trace in strict mode', () => {
    expect(check(refundFixture(), { mode: 'strict', messages }).status).toBe('pass');
  });

  it('fails, saying where, when the messages cannot be read', () => {
    const bad = (toolCall: unknown) =>
      check(buildTrajectory([]), {
        mode: 'strict',
        messages: [{ role: 'user' }, { role: 'assistant', tool_calls: [toolCall] }],
      });
    expect(summary(bad({ function: { name: 'x', arguments: '[1]' } }))).toEqual({
      rule: 'reference.strict',
      status: 'fail',
      reason:
        'the reference cannot be read: messages[1].tool_calls[0].function.arguments: expected a JSON object ' +
        'of arguments, got [1]',
    });
    expect(bad({ function: { name: 'x', arguments: '{"a":' } }).reason).toMatch(
      /^the reference cannot be read: messages\[1\]\.tool_calls\[0\]\.function\.arguments: not valid JSON \(.+\)$/,
    );
    expect(bad({ type: 'function' }).reason).toBe(
      'the reference cannot be read: messages[1].tool_calls[0]: no tool name (expected function.name or name)',
    );
  });
});

describe('reference: the Vercel AI SDK v7 refund trace', () => {
  // get_order ∥ get_refund_policy, then issue_refund, then send_confirmation.
  const order = { orderId: 'A1001' };
  const refundCall = { tool: 'issue_refund', args: { orderId: 'A1001', amount: 42.5 } };
  const confirmation = { tool: 'send_confirmation', args: { email: 'ana@example.com', refundId: 'R-7781' } };
  const parallel = [
    [
      { tool: 'get_refund_policy', args: order },
      { tool: 'get_order', args: order },
    ],
    [refundCall],
    [confirmation],
  ];

  it('passes its own turns in every mode', () => {
    for (const mode of ['strict', 'unordered', 'subset', 'superset']) {
      expect(check(refundFixture(), { mode, turns: parallel }).status).toBe('pass');
    }
  });

  it('strict fails a reference that makes the parallel reads sequential; unordered passes it', () => {
    const sequential = [
      [{ tool: 'get_order', args: order }],
      [{ tool: 'get_refund_policy', args: order }],
      [refundCall],
      [confirmation],
    ];
    const result = check(refundFixture(), { mode: 'strict', turns: sequential });
    expect(result.reason).toBe(
      'turn 1: expected [get_order], saw [get_order, get_refund_policy] (calls call_get_order_1, ' +
        'call_get_refund_policy_1); matched 0 of 4 reference turns; the reference has 4 turns, the trace 3',
    );
    expect(ids(result)).toEqual(['call_get_order_1', 'call_get_refund_policy_1']);
    expect(check(refundFixture(), { mode: 'unordered', turns: sequential }).status).toBe('pass');
  });

  it('superset fails a different refund amount, naming the call and the difference', () => {
    const result = check(refundFixture(), {
      mode: 'superset',
      turns: [[{ tool: 'get_order' }], [{ tool: 'issue_refund', args: { orderId: 'A1001', amount: 40 } }]],
    });
    expect(result.reason).toBe(
      'reference call #2 issue_refund {"orderId":"A1001","amount":40} has no match; closest: call ' +
        'call_issue_refund_1 issue_refund amount: expected 40, saw 42.5; matched 1 of 2 reference calls',
    );
    expect(ids(result)).toEqual(['call_issue_refund_1']);
  });

  it('subset fails the confirmation the reference leaves out', () => {
    const result = check(refundFixture(), { mode: 'subset', turns: parallel.slice(0, 2) });
    expect(result.reason).toBe(
      'call call_send_confirmation_1 send_confirmation {"email":"ana@example.com","refundId":"R-7781"} is ' +
        'not in the reference: the reference has no send_confirmation call; matched 3 of 4 calls',
    );
  });
});

describe('strict mode on a trace without turns', () => {
  it('treats calls issued together before any result as one parallel turn', () => {
    const trajectory = trajectoryFromTypedEvents('t', [
      { kind: 'call', id: 'a', tool: 'A', args: {} },
      { kind: 'call', id: 'b', tool: 'B', args: {} },
      { kind: 'result', callId: 'a', ok: true, output: {} },
      { kind: 'result', callId: 'b', ok: true, output: {} },
    ]);
    const verdict = (turns: { tool: string }[][]) =>
      referenceFamily(trajectory, { mode: 'strict', argsMode: 'ignore', turns })[0]?.status;
    expect(verdict([[{ tool: 'A' }, { tool: 'B' }]])).toBe('pass');
    expect(verdict([[{ tool: 'A' }], [{ tool: 'B' }]])).toBe('fail');
  });
});
