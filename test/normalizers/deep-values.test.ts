/**
 * A value nested deeper than any call stack goes (thousands of `[`), anywhere in a recorded
 * trace's JSON: in a tool's arguments, in its result, inside a chat history. JSON.parse reads it
 * (V8's parser does not recurse), so everything after it must not recurse on it either: the
 * trajectory holds no value deeper than MAX_JSON_DEPTH, a call whose arguments or result were
 * deeper says so in a `trajectory.*.too_deep` finding, and the trace is judged (never a thrown
 * evaluation, which costs the trace its verdict), its report written and its view drawn.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderViewPage } from '../../src/cli/view-html.js';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import { MAX_JSON_DEPTH, nestedDeeperThan, TOO_DEEP_TEXT } from '../../src/model/json-depth.js';
import type { AttributeValue, SpanRecord } from '../../src/model/span-record.js';
import { type AgentRun, type CallTiming, type ToolCall, Trajectory } from '../../src/model/trajectory.js';
import { groupByTrace, normalizeTrace } from '../../src/normalizers/normalize.js';
import { parseScenarioText } from '../../src/scenario/scenario.js';

const FIXTURES = fileURLToPath(new URL('../spans/', import.meta.url));
const DEPTH = 5_000;

/** The example refund scenario for any agent, with argument checks of every mode and the efficiency rules. */
const SCENARIO = parseScenarioText(
  `${readFileSync(
    fileURLToPath(new URL('../../examples/vercel-ai-agent/refund.scenario.yaml', import.meta.url)),
    'utf8',
  ).replace(/appliesTo:\n {2}agent: .*\n/, '')}
arguments:
  - { tool: issue_refund, match: { mode: exact, args: { orderId: ORD-1 } } }
  - { tool: issue_refund, match: { mode: superset, args: { amount: 40 } } }
  - { tool: issue_refund, match: { mode: regex, pattern: "amount" } }
  - { tool: get_order, match: { mode: schema, schema: { type: object } } }
`.replace(
    'efficiency:\n  maxCalls: 6',
    'efficiency:\n  maxCalls: 6\n  repeats: { max: 0 }\n  retries: { max: 1 }',
  ),
  'refund.scenario.yaml',
);

const RECORDED: SpanRecord[][] = readdirSync(FIXTURES)
  .filter((file) => file.endsWith('.otlp.json'))
  .flatMap((file) => {
    const spans = readStoredTraces(readFileSync(`${FIXTURES}${file}`, 'utf8'), file).input;
    if (spans?.format !== 'otlp-json') return [];
    return [...groupByTrace(spans.spans).values()];
  });

/** `[[[...1...]]]`, `levels` deep. */
const nestedText = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

const MARK = '\u0000deep\u0000';

/** Every leaf of a JSON value, as a path of keys and indexes (the value itself when it is a leaf). */
function leafPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [path];
  const entries = Array.isArray(value)
    ? value.map((item, index) => [index, item] as const)
    : Object.entries(value);
  return entries.length === 0 ? [path] : entries.flatMap(([key, item]) => leafPaths(item, [...path, key]));
}

/** The JSON text with the leaf at `path` replaced by a value `levels` deep (JSON.stringify could not write it). */
function withDeepLeaf(text: string, path: readonly (string | number)[], levels: number): string {
  const parsed = JSON.parse(text);
  if (path.length === 0) return nestedText(levels);
  let at = parsed;
  for (const key of path.slice(0, -1)) at = at[key];
  at[path[path.length - 1] as string | number] = MARK;
  return JSON.stringify(parsed).replace(JSON.stringify(MARK), nestedText(levels));
}

/** Where a recorded trace can hold a deep value: each JSON-valued attribute of each span, at each leaf. */
const places = RECORDED.flatMap((spans, trace) =>
  spans.flatMap((span, index) =>
    Object.entries(span.attributes).flatMap(([key, value]) => {
      if (typeof value !== 'string' || !/^\s*[[{]/.test(value)) return [];
      try {
        return leafPaths(JSON.parse(value)).map((path) => ({ trace, span: index, key, path }));
      } catch {
        return [];
      }
    }),
  ),
);

function withDeep(place: (typeof places)[number], value: AttributeValue): SpanRecord[] {
  const spans = RECORDED[place.trace] as SpanRecord[];
  return spans.map((span, index) =>
    index === place.span ? { ...span, attributes: { ...span.attributes, [place.key]: value } } : span,
  );
}

/** The recorded trace with a value {@link DEPTH} deep at `place`, normalized. */
function trajectoryWithDeep(place: (typeof places)[number]): Trajectory | undefined {
  const text = (RECORDED[place.trace] as SpanRecord[])[place.span]?.attributes[place.key] as string;
  const spans = withDeep(place, withDeepLeaf(text, place.path, DEPTH));
  return normalizeTrace(spans[0]?.traceId as string, spans);
}

/** What must hold of any trace, whatever it holds: bounded values, every deep one said, a report, a view. */
function judgedWithin(trajectory: Trajectory): void {
  for (const call of trajectory.calls) {
    for (const [what, value] of [
      ['arguments', call.args],
      ['result', call.result],
    ] as const) {
      if (!value.captured) continue;
      expect(nestedDeeperThan(value.value, MAX_JSON_DEPTH)).toBe(false);
      if (!value.tooDeep) continue;
      expect(value).toMatchObject({ value: TOO_DEEP_TEXT, parseError: 'nested deeper than 64 levels' });
      expect(trajectory.issues).toContainEqual(
        expect.objectContaining({
          kind: `${what}.too_deep`,
          message: expect.stringContaining(`(call ${call.id})`),
        }),
      );
    }
  }
  const report = evaluate(trajectory, SCENARIO);
  expect(JSON.parse(JSON.stringify(report)).traceId).toBe(trajectory.traceId);
  expect(renderViewPage(trajectory, [report], { source: 'test' })).toContain('<!doctype html>');
}

describe('values nested deeper than a call stack goes', () => {
  it('finds places in the recorded traces: arguments, results and chat histories', () => {
    expect(places.length).toBeGreaterThan(1_000);
    const keys = new Set(places.map((place) => place.key));
    for (const key of ['gen_ai.tool.call.arguments', 'gen_ai.tool.call.result', 'gen_ai.input.messages'])
      expect(keys).toContain(key);
  });

  it(`anywhere in a recorded trace's JSON, ${DEPTH.toLocaleString('en')} deep: judged, bounded, and said`, () => {
    fc.assert(
      fc.property(fc.constantFrom(...places), (place) => {
        const trajectory = trajectoryWithDeep(place);
        if (trajectory !== undefined) judgedWithin(trajectory);
      }),
      { numRuns: 400 },
    );
  });

  it('in the arguments or result of an OTel GenAI tool span: that call says so', () => {
    const own = places.filter((place) => /^gen_ai\.tool\.call\.(arguments|result)$/.test(place.key));
    expect(own.length).toBeGreaterThan(20);
    for (const place of own) {
      const trajectory = trajectoryWithDeep(place) as Trajectory;
      judgedWithin(trajectory);
      const kind = place.key.endsWith('arguments') ? 'arguments.too_deep' : 'result.too_deep';
      const spanId = (RECORDED[place.trace] as SpanRecord[])[place.span]?.spanId as string;
      expect(trajectory.issues).toContainEqual(expect.objectContaining({ kind, spanIds: [spanId] }));
    }
  });

  it('as a structured attribute value (a SpanRecord made by hand): the same', () => {
    let deep: AttributeValue = 1;
    for (let level = 0; level < DEPTH; level++) deep = { x: [deep] };
    const argumentPlaces = places.filter((place) => place.key === 'gen_ai.tool.call.arguments');
    expect(argumentPlaces.length).toBeGreaterThan(5);
    for (const place of argumentPlaces) {
      const spans = withDeep(place, deep);
      const trajectory = normalizeTrace(spans[0]?.traceId as string, spans) as Trajectory;
      judgedWithin(trajectory);
      expect(trajectory.issues.map((issue) => issue.kind)).toContain('arguments.too_deep');
    }
  });

  it(`reads ${MAX_JSON_DEPTH} levels as they are, and one more as too deep`, () => {
    const found = places.find((p) => p.key === 'gen_ai.tool.call.arguments' && p.path.length === 1);
    if (found === undefined) throw new Error('no tool call arguments with a top-level key in the fixtures');
    const place = found;
    const span = (RECORDED[place.trace] as SpanRecord[])[place.span] as SpanRecord;
    const text = span.attributes[place.key] as string;
    const argsOf = (levels: number) => {
      const spans = withDeep(place, withDeepLeaf(text, place.path, levels));
      const trajectory = normalizeTrace(span.traceId, spans) as Trajectory;
      return trajectory.calls.find((call) => call.spanId === span.spanId)?.args;
    };
    // The arguments object is one level, the nest under its key the rest.
    expect(argsOf(MAX_JSON_DEPTH - 1)).toMatchObject({ captured: true });
    expect(argsOf(MAX_JSON_DEPTH - 1)).not.toHaveProperty('tooDeep');
    expect(argsOf(MAX_JSON_DEPTH)).toMatchObject({ tooDeep: true, value: TOO_DEEP_TEXT });
  });

  it('20,000 sub-agents nested one in another: the view draws them all, at most 32 inside one another', () => {
    const levels = 20_000;
    const runs: AgentRun[] = [];
    const calls: ToolCall[] = [];
    const timing = new Map<string, CallTiming>();
    for (let level = 0; level < levels; level++) {
      const id = `c${level}`;
      calls.push({
        id,
        tool: 'delegate',
        args: { captured: true, value: { level } },
        result: { captured: false },
        outcome: { status: 'ok' },
        convention: 'test',
      });
      timing.set(id, { issuedAt: BigInt(2 * level), completedAt: BigInt(2 * level + 1) });
      runs.push({
        id: `run${level}`,
        name: `agent ${level}`,
        ...(level > 0 && { parentRunId: `run${level - 1}`, parentCallId: `c${level - 1}` }),
        turns: [],
        calls: [id],
      });
    }
    const trajectory = new Trajectory({ traceId: 'a'.repeat(32), calls, timing, agents: runs });
    const page = renderViewPage(trajectory, [], { source: 'test' });
    expect(page.match(/data-run-id=/g)).toHaveLength(levels);
    for (let level = 0; level < levels; level += 997) expect(page).toContain(`data-run-id="run${level}"`);
    // Every 33rd run starts again at the top, and says where it belongs.
    expect(page.match(/nested too deep to draw inside it/g)).toHaveLength(Math.floor((levels - 1) / 33));
  });
});
