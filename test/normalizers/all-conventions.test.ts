/**
 * Every captured or documented fixture, read the way `toolpath eval` reads it (default
 * convention precedence, not a hand-picked list), tells the same story: the refund runs ask for
 * get_order and get_refund_policy in one response, then issue_refund, then send_confirmation;
 * the tool-error runs fail issue_refund after get_order.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import type { Convention } from '../../src/normalizers/convention.js';
import { CONVENTIONS } from '../../src/normalizers/conventions.js';
import { normalizeSpans } from '../../src/normalizers/normalize.js';
import { orderedPairs } from '../helpers/fixtures.js';

const dir = new URL('../spans/', import.meta.url);
const fixtures = readdirSync(dir).filter((name) => name.endsWith('.otlp.json'));

function trajectoryOf(name: string): Trajectory {
  const read = readStoredTraces(readFileSync(new URL(name, dir), 'utf8'), name);
  if (read.input?.format !== 'otlp-json') throw new Error(`${name}: ${JSON.stringify(read.errors)}`);
  const trajectories = normalizeSpans(read.input.spans);
  expect(trajectories).toHaveLength(1);
  return trajectories[0] as Trajectory;
}

const REFUND_PAIRS = [
  'get_order->issue_refund',
  'get_order->send_confirmation',
  'get_refund_policy->issue_refund',
  'get_refund_policy->send_confirmation',
  'issue_refund->send_confirmation',
];

describe('every convention, through the default precedence', () => {
  const refunds = fixtures.filter(
    (name) => /-refund\.otlp\.json$/.test(name) && !name.startsWith('sdk-genai'),
  );
  it('covers at least ten conventions of refund runs', () => {
    const conventions = new Set(refunds.map((name) => trajectoryOf(name).calls[0]?.convention));
    expect(conventions.size).toBeGreaterThanOrEqual(9);
  });

  it.each(refunds)('%s: the parallel lookups, then the refund, then the confirmation', (name) => {
    const trajectory = trajectoryOf(name);
    expect(trajectory.issues).toEqual([]);
    expect(trajectory.calls.map((call) => call.tool).sort()).toEqual([
      'get_order',
      'get_refund_policy',
      'issue_refund',
      'send_confirmation',
    ]);
    expect(trajectory.calls.every((call) => call.outcome.status === 'ok')).toBe(true);
    expect(orderedPairs(trajectory)).toEqual(REFUND_PAIRS);
    const [order, policy] = ['get_order', 'get_refund_policy'].map((tool) =>
      trajectory.calls.find((call) => call.tool === tool),
    );
    expect(order?.turnId).toBeDefined();
    expect(order?.turnId).toBe(policy?.turnId);
  });

  it('reads token usage from GenAI inference spans', () => {
    const trajectory = trajectoryOf('vercel-ai-v7-genai-refund.otlp.json');
    expect(
      trajectory.turns.every(
        (turn) => (turn.usage?.inputTokens ?? 0) > 0 && (turn.usage?.outputTokens ?? 0) > 0,
      ),
    ).toBe(true);
  });

  const errors = fixtures.filter((name) => name.endsWith('-tool-error.otlp.json'));
  it.each(errors)('%s: issue_refund fails (or never reports back) after get_order', (name) => {
    const trajectory = trajectoryOf(name);
    const refunds = trajectory.calls.filter((call) => call.tool === 'issue_refund');
    const order = trajectory.calls.find((call) => call.tool === 'get_order');
    expect(refunds.length).toBeGreaterThan(0);
    for (const refund of refunds) {
      expect(['error', 'no_result']).toContain(refund.outcome.status);
      if (order) expect(trajectory.happensBefore(order, refund)).toBe(true);
    }
  });
});

describe('convention marks', () => {
  const bearsOwnMark = (span: SpanRecord, { marks }: Convention) =>
    !marks ||
    marks.keys.some((key) => Object.hasOwn(span.attributes, key)) ||
    (marks.scopes ?? []).includes(span.scope.name) ||
    (marks.namePrefixes ?? []).some((prefix) => span.name.startsWith(prefix));
  const spanFiles = readdirSync(dir).filter((name) => /\.(otlp\.json|jsonl)$/.test(name));

  // Spans without any mark are not offered to conventions that declare marks: a convention
  // that claimed such a span would silently stop reading it.
  it.each(spanFiles)('%s: every convention claims only spans bearing its marks', (name) => {
    const read = readStoredTraces(readFileSync(new URL(name, dir), 'utf8'), name);
    if (!read.input || !('spans' in read.input)) throw new Error(`${name}: ${JSON.stringify(read.errors)}`);
    for (const span of read.input.spans) {
      for (const convention of CONVENTIONS) {
        if (convention.read(span) === undefined) continue;
        expect(bearsOwnMark(span, convention), `${convention.name} claims ${span.name}`).toBe(true);
      }
    }
  });
});
