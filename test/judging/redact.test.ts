import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { REDACTED, Redactor } from '../../src/judging/redact.js';
import type { Report } from '../../src/model/report.js';
import { capturedJson } from '../../src/normalizers/attributes.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';
import { buildTrajectory } from '../helpers/trajectory.js';

// The demo's made-up confirmation: send_confirmation's refundId "R-7731" appears in no result;
// issue_refund returned "R-1001". A wrong-amount and wrong-email check quote more values.
const trajectory = trajectoryOf(fixture('demo-agent-made-up-confirmation'));
const scenario = parseScenario(
  {
    id: 'redaction',
    grounding: [
      { tool: 'send_confirmation', path: 'refundId', from: { tool: 'issue_refund', path: 'refundId' } },
    ],
    arguments: [
      {
        tool: 'send_confirmation',
        match: { mode: 'exact', args: { email: 'someone@else.example', refundId: 'R-1' } },
      },
    ],
  },
  'redaction.json',
);
const report = evaluate(trajectory, scenario);
const text = (r: Report) =>
  [...r.findings.map((f) => f.message), ...r.assertions.map((a) => a.reason)].join('\n');

describe('Redactor', () => {
  it('the unredacted report quotes the captured values (what the test below removes)', () => {
    expect(text(report)).toContain('R-7731');
    expect(text(report)).toContain('R-1001');
  });

  it('removes every captured argument and result value from messages and reasons by default', () => {
    const redacted = new Redactor().redact(report, trajectory);
    const out = text(redacted);
    for (const value of ['R-7731', 'R-1001', 'ana@example.com']) expect(out).not.toContain(value);
    expect(out).toContain(REDACTED);
    // What is not a captured value stays: rule ids, tool names, call ids.
    expect(out).toContain('send_confirmation');
    expect(redacted.findings.map((f) => f.rule)).toEqual(report.findings.map((f) => f.rule));
    // The input report is not changed.
    expect(text(report)).toContain('R-7731');
  });

  it('keeps allowlisted fields and hashes listed identifiers consistently', () => {
    const redactor = new Redactor({ keepFields: ['email'], hashFields: ['refundId'], hashKey: 'k' });
    const out = text(redactor.redact(report, trajectory));
    expect(out).not.toContain('R-7731');
    expect(out).toContain(redactor.hashOf('R-7731'));
    expect(out).toContain(redactor.hashOf('R-1001'));
    expect(redactor.hashOf('R-7731')).not.toBe(redactor.hashOf('R-1001'));
    expect(new Redactor({ hashKey: 'other' }).hashOf('R-7731')).not.toBe(redactor.hashOf('R-7731'));
  });

  it('returns the report untouched when redaction is off', () => {
    expect(new Redactor(false).redact(report, trajectory)).toBe(report);
  });

  it('leaks no captured string of at least 3 characters over every fixture against a scenario quoting arguments', () => {
    const files = readdirSync(new URL('../spans/', import.meta.url)).filter((f) => f.endsWith('.otlp.json'));
    const quoting = parseScenario(
      {
        id: 'quote-everything',
        arguments: [{ tool: 'issue_refund', match: { mode: 'exact', args: { nothing: 'alike' } } }],
      },
      'q.json',
    );
    for (const file of files) {
      const t = trajectoryOf(fixture(file));
      const out = text(new Redactor().redact(evaluate(t, quoting), t));
      for (const call of t.calls) {
        for (const captured of [call.args, call.result]) {
          if (!captured.captured) continue;
          for (const leaf of stringLeaves(captured.value))
            if (leaf.length >= 3) expect(out, file).not.toContain(`"${leaf}"`);
        }
      }
    }
  });

  it('leaks neither unparsable arguments (through the JSON error), tool error messages, nor values with spaces', () => {
    const raw = 'card=4111111111111111&cvv=123';
    const args = capturedJson(raw);
    const parseError = args.captured ? (args.parseError ?? '') : '';
    expect(parseError).not.toContain('card');
    const lookup = buildTrajectory([{ tool: 'lookup', args: { customer: 'Ana Lima' } }]);
    const call = lookup.calls[0] as (typeof lookup.calls)[number];
    const withRaw = {
      calls: [
        { ...call, args, outcome: { status: 'ok' as const } },
        {
          ...call,
          id: 'c2',
          outcome: { status: 'error' as const, message: 'no record for Ana Lima, ssn 123-45-6789' },
        },
      ],
    } as unknown as typeof lookup;
    const leaky: Report = {
      ...report,
      findings: [
        {
          rule: 'x',
          severity: 'hard',
          message: `not valid JSON (${parseError}): ${raw}`,
          calls: [],
          spans: [],
        },
        {
          rule: 'y',
          severity: 'hard',
          message: 'customer Ana Lima of lookup; lookup failed (no record for Ana Lima, ssn 123-45-6789)',
          calls: [],
          spans: [],
        },
      ],
    };
    const out = text(new Redactor().redact(leaky, withRaw));
    for (const secret of ['4111', 'cvv', 'Ana Lima', '123-45-6789']) expect(out).not.toContain(secret);
  });
});

function stringLeaves(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringLeaves);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringLeaves);
  return [];
}
