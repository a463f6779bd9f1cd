/**
 * The bounds on a conversation's provisional judgements, on random conversations long enough to
 * be coalesced: the final judgement is the one of every trace joined at once (as without them),
 * each provisional report judged is the one of the traces so far joined at once, cut to its
 * bound, the others say they were coalesced, and the work stays linear. And the cut itself, on
 * random reports: under the bound, keeping the latest trace ids and the hard findings first,
 * counting exactly what it left out.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appliesTo } from '../../src/evaluate/applies-to.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { ConversationJudge, conversationLimits } from '../../src/judging/conversation-judge.js';
import {
  ALWAYS_JUDGED_SIZE,
  boundProvisional,
  GROWTH,
  MAX_PROVISIONAL_LINE_BYTES,
} from '../../src/judging/provisional-bounds.js';
import { Redactor } from '../../src/judging/redact.js';
import { joinConversation } from '../../src/model/conversation.js';
import type { Finding, Report } from '../../src/model/report.js';
import type { Trajectory } from '../../src/model/trajectory.js';
import { normalizeTrace } from '../../src/normalizers/normalize.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { spanRecord, toolSpan } from '../helpers/spans.js';

const SCENARIOS = [
  parseScenario(
    {
      id: 'chat',
      scope: 'conversation',
      tools: { required: ['get_order', 'issue_refund'], counts: { get_order: { max: 3 } } },
      order: { before: [{ before: 'get_order', after: 'issue_refund' }] },
    },
    'test',
  ),
  // Applies only once a billing trace comes: a scenario that starts to apply mid-conversation.
  parseScenario(
    {
      id: 'billing',
      scope: 'conversation',
      appliesTo: { agent: ['billing'] },
      tools: { forbidden: ['delete_account'], counts: { issue_refund: { max: 40 } } },
    },
    'test',
  ),
];
const TOOLS = ['get_order', 'issue_refund', 'lookup', 'delete_account'];

interface TraceShape {
  agent: 'support' | 'billing';
  /** Start, ms. */
  at: number;
  tools: number[];
}

function trace(n: number, shape: TraceShape): Trajectory {
  const traceId = (n + 1).toString(16).padStart(32, '0');
  const root = spanRecord({
    traceId,
    name: `invoke_agent ${shape.agent}`,
    start: shape.at,
    end: shape.at + shape.tools.length + 2,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': shape.agent,
      'gen_ai.conversation.id': 'c',
    },
  });
  const calls = shape.tools.map((tool, k) =>
    toolSpan(TOOLS[tool] as string, {
      traceId,
      parentSpanId: root.spanId,
      start: shape.at + 1 + k,
      end: shape.at + 2 + k,
      // Ids shared between traces: the join prefixes them.
      callId: `call-${k}`,
      args: { orderId: `A${k % 3}` },
    }),
  );
  return normalizeTrace(traceId, [root, ...calls]) as Trajectory;
}

const shapes = fc.array(
  fc.record({
    agent: fc.constantFrom<TraceShape['agent']>('support', 'support', 'support', 'billing'),
    at: fc.integer({ min: 0, max: 1_000_000 }),
    tools: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 0, maxLength: 12 }),
  }),
  { minLength: 100, maxLength: 220 },
);

/** 200 traces of 6 calls: past ALWAYS_JUDGED_SIZE, so some provisional judgements are coalesced. */
const LONG: TraceShape[] = Array.from({ length: 200 }, (_, n) => ({
  agent: n % 7 === 3 ? 'billing' : 'support',
  at: n * 100,
  tools: [0, 2, n % 4, 1, 2, (n * 3) % 4],
}));

/** What judging the traces so far all at once gives: today's provisional (or final) reports. */
function joinedAtOnce(traces: readonly Trajectory[], provisional: boolean): Report[] {
  const joined = joinConversation('c', traces);
  return SCENARIOS.filter((scenario) => traces.some((trace) => appliesTo(scenario, trace))).map(
    (scenario) => {
      const report = evaluate(joined, scenario, provisional ? { provisional: true } : {});
      report.final = !provisional;
      return provisional ? boundProvisional(report) : report;
    },
  );
}

const coalesced = (report: Report) =>
  report.findings.some((finding) => finding.rule === 'conversation.coalesced');

describe('provisional judgements of a long conversation', () => {
  it('judge finally as all at once, provisionally as all at once or saying they were coalesced, in linear work', () => {
    let sawCoalesced = false;
    fc.assert(
      fc.property(shapes, (given) => {
        const judge = new ConversationJudge(
          SCENARIOS,
          new Redactor(false),
          conversationLimits({ idleMs: 10 }),
        );
        const traces = given.map((shape, n) => trace(n, shape));
        let size = 0;
        // The sizes judged at past the small start (where every trace is judged).
        let work = 0;
        for (const [n, trajectory] of traces.entries()) {
          size += 1 + trajectory.calls.length + trajectory.turns.length;
          const { reports, closed } = judge.afterTrace(trajectory, undefined, n);
          expect(closed).toEqual([]);
          const soFar = traces.slice(0, n + 1);
          if (reports.some(coalesced)) {
            sawCoalesced = true;
            expect(size).toBeGreaterThan(ALWAYS_JUDGED_SIZE);
            for (const report of reports) {
              expect(report).toMatchObject({
                final: false,
                verdict: 'inconclusive',
                traceId: trajectory.traceId,
              });
              expect(coalesced(report)).toBe(true);
            }
            expect(reports.map((report) => report.scenario.id)).toEqual(
              SCENARIOS.filter((scenario) => soFar.some((trace) => appliesTo(scenario, trace))).map(
                (scenario) => scenario.id,
              ),
            );
          } else {
            if (size > ALWAYS_JUDGED_SIZE) work += size;
            expect(reports).toEqual(joinedAtOnce(soFar, true));
          }
          for (const report of reports)
            expect(Buffer.byteLength(JSON.stringify(report))).toBeLessThan(MAX_PROVISIONAL_LINE_BYTES);
        }
        // Past the small start, judged at sizes growing by 1/GROWTH: (GROWTH + 1) times the size at
        // most, and once more for each scenario that starts to apply.
        expect(work).toBeLessThanOrEqual((GROWTH + 1 + SCENARIOS.length) * size);
        const [final] = judge.expire(1e9);
        expect(final?.traceIds).toHaveLength(traces.length);
        expect(final?.reports).toEqual(joinedAtOnce(traces, false));
      }),
      // fast-check's small default sizes rarely pass ALWAYS_JUDGED_SIZE, so one conversation
      // that surely does is always among the inputs.
      { numRuns: 10, examples: [[LONG]] },
    );
    expect(sawCoalesced).toBe(true);
  }, 120_000);
});

const id = fc.stringMatching(/^[0-9a-f]{32}$/);
const finding: fc.Arbitrary<Finding> = fc
  .record({
    rule: fc.constantFrom('tools.count', 'order.before', 'tools.required', 'safety.irreversible'),
    severity: fc.constantFrom<Finding['severity']>('hard', 'warning'),
    message: fc.string({ maxLength: 3_000 }),
    calls: fc.array(fc.string({ maxLength: 20 }), { maxLength: 200 }),
    inconclusive: fc.boolean(),
    pending: fc.boolean(),
  })
  .map((given) => ({
    ...given,
    spans: given.calls.map((call) => `${call}-span`),
    traceIds: given.calls.map(() => 'f'.repeat(32)),
  }));
const report: fc.Arbitrary<Report> = fc
  .record({
    traceIds: fc.array(id, { minLength: 1, maxLength: 300 }),
    findings: fc.array(finding, { maxLength: 80 }),
    assertions: fc.array(
      fc.record({
        name: fc.string({ maxLength: 40 }),
        status: fc.constantFrom<'pass' | 'fail'>('pass', 'fail'),
        reason: fc.string({ maxLength: 2_000 }),
      }),
      { maxLength: 60 },
    ),
  })
  .map((given) => ({
    traceId: given.traceIds[given.traceIds.length - 1] as string,
    conversationId: 'c',
    traceIds: given.traceIds,
    final: false,
    scenario: { id: 'chat' },
    toolpathVersion: '0.0.0',
    verdict: 'fail',
    pass: false,
    scores: { order: 0.5 },
    findings: given.findings,
    assertions: given.assertions,
    stats: { calls: 10, turns: 2, errors: 0, durationMs: 5 },
  }));

const rank = (f: Finding) => (f.severity !== 'hard' ? 3 : f.pending ? 2 : f.inconclusive ? 1 : 0);

describe('a provisional report cut to its bound', () => {
  it('fits, keeps the latest trace ids and the most important findings, and counts what it left out', () => {
    fc.assert(
      fc.property(report, (given) => {
        const original: Report = structuredClone(given);
        const cut = boundProvisional(given);
        expect(Buffer.byteLength(JSON.stringify(cut))).toBeLessThanOrEqual(MAX_PROVISIONAL_LINE_BYTES - 1024);
        const ids = original.traceIds as string[];
        expect(cut.traceIds).toEqual(ids.slice(ids.length - (cut.traceIds?.length ?? 0)));
        expect((cut.traceIds?.length ?? 0) + (cut.cut?.traceIds ?? 0)).toBe(ids.length);
        expect(cut.findings.length + (cut.cut?.findings ?? 0)).toBe(original.findings.length);
        expect(cut.assertions.length + (cut.cut?.assertions ?? 0)).toBe(original.assertions.length);
        // Those kept are the most important first (hard failures, then hard undecided, pending,
        // warnings; earlier first), in their own order, each cut from its original.
        const ranked = [...original.findings.keys()].sort(
          (x, y) => rank(original.findings[x] as Finding) - rank(original.findings[y] as Finding) || x - y,
        );
        const kept = ranked.slice(0, cut.findings.length).sort((x, y) => x - y);
        cut.findings.forEach((finding, k) => {
          const from = original.findings[kept[k] as number] as Finding;
          expect(finding.rule).toBe(from.rule);
          expect(sameStart(from, finding)).toBe(true);
        });
        const callsLeft = original.findings.reduce((sum, f) => sum + Math.max(0, f.calls.length - 32), 0);
        expect(cut.cut?.calls ?? 0).toBe(callsLeft);
        const nothingCut = Object.keys(cut.cut ?? {}).length === 0;
        if (nothingCut) expect(cut).toEqual(original);
      }),
      { numRuns: 200 },
    );
  });
});

function sameStart(original: Finding, kept: Finding): boolean {
  return (
    original.severity === kept.severity &&
    original.calls.slice(0, kept.calls.length).every((call, index) => call === kept.calls[index]) &&
    original.message.startsWith(kept.message.replace(/…$/, ''))
  );
}
