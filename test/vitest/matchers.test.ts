/**
 * `toolpath/vitest`: the matchers on every kind of subject, passing, failing (what the failure
 * message shows) and negated; and captureSpans on the demo agent under a real SDK provider.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ProxyTracerProvider, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { parseOtlpJsonText } from '../../src/collector/otlp-json.js';
import { runAgent } from '../../src/demo/agent.js';
import { DEMO_CONVERSATIONS, DEMO_SCENARIO } from '../../src/demo/conversations.js';
import { ScriptedModel, type ScriptStep } from '../../src/demo/mock-model.js';
import { supportTools } from '../../src/demo/tools.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import type { Report } from '../../src/model/report.js';
import { normalizeSpans } from '../../src/normalizers/normalize.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { captureSpans, installToolpathMatchers } from '../../src/vitest.js';
import { fixture } from '../helpers/fixtures.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

installToolpathMatchers();

const text = (name: string) =>
  readFileSync(new URL(`../spans/demo-agent-${name}.otlp.json`, import.meta.url), 'utf8');
const GOOD = text('good-refund');
const EARLY = text('refund-before-policy');
const scenario = parseScenario(DEMO_SCENARIO, 'demo.yaml');

/** The report of a demo-agent fixture against the demo scenario. */
function reportOf(name: string): Report {
  const [trajectory] = normalizeSpans(fixture(`demo-agent-${name}`));
  if (!trajectory) throw new Error(`${name}: no trajectory`);
  return evaluate(trajectory, scenario);
}

/** The message of the assertion error `run` throws; fails the test when it throws none. */
function failureOf(run: () => void): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the matcher to fail, it passed');
}

describe('toPassScenario and toFailScenario', () => {
  it('accept every kind of trace subject', () => {
    const [trajectory] = normalizeSpans(fixture('demo-agent-good-refund'));
    if (!trajectory) throw new Error('no trajectory');
    expect(GOOD).toPassScenario(scenario);
    expect(parseOtlpJsonText(GOOD)).toPassScenario(scenario);
    expect(fixture('demo-agent-good-refund')).toPassScenario(scenario);
    expect(trajectory).toPassScenario(scenario);
    expect(evaluate(trajectory, scenario)).toPassScenario();
    expect(EARLY).toFailScenario(scenario);
    expect(reportOf('refund-before-policy')).toFailScenario();
  });

  it('accept the scenario as a loaded Scenario, a document, or a file path', async () => {
    const dir = temporaryDir('toolpath-vitest-');
    const path = join(dir, 'refund.json');
    await writeFile(path, JSON.stringify(DEMO_SCENARIO));
    expect(GOOD).toPassScenario(DEMO_SCENARIO);
    expect(GOOD).toPassScenario(path);
    expect(EARLY).toFailScenario(path);
    expect(() => expect(GOOD).toPassScenario(join(dir, 'missing.yaml'))).toThrow(
      /scenario .*missing\.yaml: no such file: \/\S*missing\.yaml/,
    );
    expect(() => expect(GOOD).toPassScenario({ id: 'x', tools: { alowed: [] } })).toThrow(/inline scenario/);
  });

  it('a failing toPassScenario shows the verdict, one line per call and the findings', () => {
    const message = failureOf(() => expect(EARLY).toPassScenario(scenario));
    expect(message).toMatch(
      /^expected trace [0-9a-f]{32} against scenario demo\.support\.refund@2 to pass, but its verdict is fail/,
    );
    expect(message).toContain('trajectory (4 calls, 5 turns):');
    expect(message).toMatch(/^ {2}call_1 +get_order +ok +turn 1 +\{"orderId":"O-17"\}$/m);
    expect(message).toMatch(/^ {2}call_2 +issue_refund +ok +turn 2 +\{"orderId":"O-17","amount":40\}$/m);
    expect(message).toContain('findings (1):');
    expect(message).toMatch(
      /^ {2}order\.before \[hard\] \(order\.before\[0\]\): issue_refund \(call call_2\) came before/m,
    );
  });

  it('.not inverts them, and a failing .not says the trace passed', () => {
    expect(EARLY).not.toPassScenario(scenario);
    expect(GOOD).not.toFailScenario(scenario);
    const message = failureOf(() => expect(GOOD).not.toPassScenario(scenario));
    expect(message).toContain('not to pass, but its verdict is pass');
    expect(message).toMatch(/call_3 +issue_refund/);
    expect(message).toContain('findings: none');
    expect(failureOf(() => expect(GOOD).toFailScenario(scenario))).toContain(
      'to fail, but its verdict is pass',
    );
  });

  it('work as asymmetric matchers', () => {
    expect({ good: GOOD, early: EARLY }).toEqual({
      good: expect.toPassScenario(scenario),
      early: expect.toFailScenario(scenario),
    });
  });
});

describe('toHaveFinding', () => {
  it('finds a finding by rule and by every field given', () => {
    expect(EARLY).toHaveFinding('order.before', { scenario });
    expect(EARLY).toHaveFinding('order.before', {
      scenario,
      message: /issue_refund \(call call_2\).*get_refund_policy/,
      calls: ['call_2', 'call_3'],
      severity: 'hard',
      assertion: 'order.before[0]',
    });
    expect(EARLY).toHaveFinding('order.before', { scenario, message: 'came before any get_refund_policy' });
    expect(EARLY).toHaveFinding('order.before', { scenario, calls: expect.arrayContaining(['call_3']) });
    expect(reportOf('made-up-confirmation')).toHaveFinding('grounding.source', { message: /R-7731/ });
  });

  it('fails when one field differs, naming the rule and showing the calls and findings', () => {
    for (const expected of [
      { severity: 'warning' as const },
      { message: 'refund policy' },
      { message: /^get_order/ },
      { calls: ['call_2'] },
      { assertion: 'order.before[1]' },
    ]) {
      expect(EARLY).not.toHaveFinding('order.before', { scenario, ...expected });
    }
    const message = failureOf(() =>
      expect(EARLY).toHaveFinding('order.terminal', { scenario, message: /confirmation/, calls: ['call_4'] }),
    );
    expect(message).toContain(
      'to have a finding order.terminal with message matching /confirmation/, calls ["call_4"], but none matched',
    );
    expect(message).toMatch(/^ {2}call_4 +send_confirmation +ok +turn 4 /m);
    expect(message).toMatch(/^ {2}order\.before \[hard\]/m);
  });

  it('.not fails on a matching finding and shows it', () => {
    expect(GOOD).not.toHaveFinding('order.before', { scenario });
    const message = failureOf(() => expect(EARLY).not.toHaveFinding('order.before', { scenario }));
    expect(message).toMatch(/not to have a finding order\.before, but it has:\n {2}order\.before \[hard\]/);
  });

  it('on a Report subject, says the trajectory is not there but still lists the findings', () => {
    const report = reportOf('refund-before-policy');
    const message = failureOf(() => expect(report).toHaveFinding('tools.allowed'));
    expect(message).toContain('trajectory: not in a Report (4 calls, 5 turns)');
    expect(message).toContain('order.before [hard]');
  });
});

describe('subjects and arguments the matchers refuse', () => {
  it('several traces ask for one, naming them; spans of no agent say so', () => {
    const two = [...fixture('demo-agent-good-refund'), ...fixture('demo-agent-refund-before-policy')];
    expect(() => expect(two).toPassScenario(scenario)).toThrow(
      /toPassScenario: expected one trace in 19 spans, found 2 \([0-9a-f]{32}, [0-9a-f]{32}\); give one/,
    );
    const requests = `[${GOOD}, ${EARLY}]`;
    expect(() => expect(requests).toFailScenario(scenario)).toThrow(
      /toFailScenario: expected one trace in the trace text, found 2/,
    );
    expect(() => expect(JSON.parse(requests)).toFailScenario(scenario)).toThrow(
      /toFailScenario: expected one trace in the OTLP requests, found 2/,
    );
    // Named and keyed as plain HTTP spans: a span still named `execute_tool …` would be tool use nothing read.
    const http = two.map((span) => ({ ...span, name: 'GET /orders', attributes: { 'http.method': 'GET' } }));
    expect(() => expect(http).toPassScenario(scenario)).toThrow(/found no agent trace/);
  });

  it('says what it got instead of a trace, a scenario or a rule', () => {
    expect(() => expect(42).toPassScenario(scenario)).toThrow(
      'toPassScenario: expected a Trajectory, a Report, SpanRecord[] or OTLP JSON (text or object); got number',
    );
    expect(() => expect({ calls: [] }).toFailScenario(scenario)).toThrow(/got an object with keys "calls"/);
    expect(() => expect('{"resourceSpans": 3}').toPassScenario(scenario)).toThrow(
      /toPassScenario: the trace text: /,
    );
    expect(() => expect(GOOD).toPassScenario()).toThrow(/toPassScenario: give a scenario/);
    expect(() => expect(GOOD).toHaveFinding('')).toThrow(/the rule id must be a non-empty string/);
    const report = reportOf('good-refund');
    expect(() => expect(report).toPassScenario({ id: 'other', tools: { forbidden: ['x'] } })).toThrow(
      'toPassScenario: the report is of scenario demo.support.refund@2, not of the scenario given (other)',
    );
  });
});

describe('captureSpans', () => {
  const [good, early] = DEMO_CONVERSATIONS;
  const run = (steps: ScriptStep[]) => (tracer: Parameters<typeof runAgent>[0]) =>
    runAgent(tracer, 'support-agent', new ScriptedModel(steps), supportTools(), 'Please refund order O-17.');

  it('captures the GenAI spans of an instrumented agent run, as one trajectory', async () => {
    if (!good || !early) throw new Error('demo conversations missing');
    const captured = await captureSpans(run(early.steps));
    expect(captured.result).toBe('Your refund of $40 is on its way.');
    expect(captured.spans.map(({ name }) => name)).toContain('execute_tool issue_refund');
    expect(new Set(captured.spans.map(({ traceId }) => traceId)).size).toBe(1);
    expect(captured.trajectories).toHaveLength(1);
    expect(captured.trajectories[0]?.calls.map(({ tool }) => tool)).toEqual([
      'get_order',
      'issue_refund',
      'get_refund_policy',
      'send_confirmation',
    ]);
    expect(captured.spans).toFailScenario(scenario);
    expect(captured.trajectories[0]).toHaveFinding('order.before', { scenario, calls: ['call_2', 'call_3'] });
  });

  it('is the global provider while the code runs, and puts the previous one back after', async () => {
    if (!good) throw new Error('demo conversations missing');
    const previous = new BasicTracerProvider();
    trace.setGlobalTracerProvider(previous);
    try {
      const captured = await captureSpans(() => run(good.steps)(trace.getTracer('code-under-test')));
      expect(captured.spans[0]?.scope.name).toBe('code-under-test');
      expect(captured.trajectories[0]).toPassScenario(scenario);
      expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate()).toBe(previous);
    } finally {
      trace.disable();
    }
    await captureSpans(async () => undefined, { allowEmpty: true });
    expect(trace.getTracer('after').startSpan('nothing').isRecording()).toBe(false);
  });

  it('restores the globals when the code throws, and refuses to overlap another capture', async () => {
    await expect(
      captureSpans(async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(trace.getTracer('after').startSpan('nothing').isRecording()).toBe(false);
    let release = () => {};
    const first = captureSpans(() => new Promise<void>((resolve) => (release = resolve)), {
      allowEmpty: true,
    });
    await expect(captureSpans(async () => 1)).rejects.toThrow(/another capture is running/);
    release();
    await first;
    expect((await captureSpans(async () => 2, { allowEmpty: true })).result).toBe(2);
  });
});
