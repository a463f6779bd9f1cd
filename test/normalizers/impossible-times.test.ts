/**
 * Timestamps no clock wrote (0 in a trace of wall-clock times, u64-max, an end before the start),
 * as an OTLP export can carry them: read, said once as `span.impossible_time`, and no rule about
 * order or duration decided on them. Before, time put the u64-max call last and `order.before`
 * failed.
 */
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { normalizeSpans } from '../../src/normalizers/normalize.js';
import { parseScenario } from '../../src/scenario/scenario.js';

const TRACE = '5b8efff798038103d269b633813fc60c';
const NOW = 1_764_700_000_000_000_000n;

function span(id: string, name: string, start: bigint | string, end: bigint | string, attributes: object) {
  return {
    traceId: TRACE,
    spanId: id,
    ...(id !== 'a000000000000001' && { parentSpanId: 'a000000000000001' }),
    name,
    kind: 1,
    startTimeUnixNano: String(start),
    endTimeUnixNano: String(end),
    attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } })),
  };
}

const tool = (id: string, name: string, start: bigint | string, end: bigint | string) =>
  span(id, `execute_tool ${name}`, start, end, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': name,
  });

function trajectoryOf(
  lookup: [bigint | string, bigint | string],
  refund: [bigint | string, bigint | string],
) {
  const body = JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [] },
        scopeSpans: [
          {
            scope: { name: 'agent' },
            spans: [
              span('a000000000000001', 'invoke_agent support', NOW, NOW + 10_000_000n, {
                'gen_ai.operation.name': 'invoke_agent',
              }),
              tool('a000000000000002', 'get_order', ...lookup),
              tool('a000000000000003', 'issue_refund', ...refund),
            ],
          },
        ],
      },
    ],
  });
  const read = readStoredTraces(body, 'trace.json');
  if (read.input?.format !== 'otlp-json') throw new Error(JSON.stringify(read.errors));
  expect(read.errors).toEqual([]);
  return normalizeSpans(read.input.spans)[0] as Trajectory;
}

const ORDERED = parseScenario(
  {
    id: 'order',
    order: { before: [{ before: 'get_order', after: 'issue_refund' }] },
    efficiency: { maxDurationMs: 60_000 },
  },
  'order',
);

function findings(trajectory: Trajectory) {
  return evaluate(trajectory, ORDERED).findings.map((finding) => [
    finding.rule,
    finding.inconclusive === true,
  ]);
}

describe('timestamps no clock wrote', () => {
  it('orders calls by sound times as before: no issue, and the order passes', () => {
    const trajectory = trajectoryOf(
      [NOW + 1_000_000n, NOW + 2_000_000n],
      [NOW + 3_000_000n, NOW + 4_000_000n],
    );
    expect(trajectory.issues).toEqual([]);
    expect(evaluate(trajectory, ORDERED).verdict).toBe('pass');
  });

  it.each([
    ['u64-max', ['18446744073709551615', '18446744073709551615'], [NOW + 3_000_000n, NOW + 4_000_000n]],
    ['0 among wall-clock times', [NOW + 5_000_000n, NOW + 6_000_000n], ['0', '0']],
    ['an end before the start', [NOW + 5_000_000n, NOW + 1_000_000n], [NOW + 3_000_000n, NOW + 4_000_000n]],
  ] as const)(
    '%s: said once, naming the span, and order.before is inconclusive, not failed',
    (_, lookup, refund) => {
      const trajectory = trajectoryOf(lookup as never, refund as never);
      const issue = trajectory.issues.find((candidate) => candidate.kind === 'span.impossible_time');
      expect(issue?.spanIds).toHaveLength(1);
      expect(findings(trajectory)).toContainEqual(['order.before', true]);
      expect(findings(trajectory)).not.toContainEqual(['order.before', false]);
      const order = evaluate(trajectory, ORDERED).findings.find((finding) => finding.rule === 'order.before');
      expect(order?.message).toContain(issue?.spanIds[0]);
      expect(evaluate(trajectory, ORDERED).verdict).toBe('inconclusive');
    },
  );
});
