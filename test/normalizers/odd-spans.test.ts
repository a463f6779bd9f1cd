/**
 * Spans from the network are whatever a producer sent: an agent convention's keys with values of
 * any type, message lists of any shape, parents that are missing or point anywhere. Normalizing
 * and evaluating such a trace must never throw (a throw costs the trace its verdict) and must
 * give the same report every time. The vocabulary is every string literal the normalizers
 * compare against, read from their sources, so a new normalizer is fuzzed with its own keys.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { AttributeValue, SpanRecord } from '../../src/model/span-record.js';
import { groupByTrace, normalizeTrace } from '../../src/normalizers/normalize.js';
import { parseScenarioText } from '../../src/scenario/scenario.js';

const NORMALIZERS = fileURLToPath(new URL('../../src/normalizers/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../spans/', import.meta.url));
const TRACE_ID = 'a'.repeat(32);

/** Every short single-quoted literal in the normalizers: keys, prefixes, operation names, roles, fields. */
const VOCABULARY = [
  ...new Set(
    readdirSync(NORMALIZERS)
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) => [...readFileSync(`${NORMALIZERS}${file}`, 'utf8').matchAll(/'([^'\\\n]{1,60})'/g)])
      .map((match) => match[1] as string),
  ),
].sort();

const SCENARIO = parseScenarioText(
  readFileSync(
    fileURLToPath(new URL('../../examples/vercel-ai-agent/refund.scenario.yaml', import.meta.url)),
    'utf8',
  )
    // Every trajectory, whatever its agent's name.
    .replace(/appliesTo:\n {2}agent: .*\n/, ''),
  'refund.scenario.yaml',
);

const word = fc.oneof(fc.constantFrom(...VOCABULARY), fc.string({ maxLength: 8 }));
/** A key as conventions write them, flattened lists included (`llm.input_messages.0.message.role`). */
const key = fc.oneof(
  fc.constantFrom(...VOCABULARY),
  fc
    .tuple(fc.constantFrom(...VOCABULARY), fc.nat(2), fc.constantFrom(...VOCABULARY))
    .map(([prefix, index, rest]) => `${prefix.replace(/\.$/, '')}.${index}.${rest.replace(/^\./, '')}`),
);

/** JSON built from the vocabulary: message lists, parts, tool calls, in any shape. */
const jsonish: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    word,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(word, tie('value'), { maxKeys: 5 }),
  ),
})).value;

const attributeValue: fc.Arbitrary<AttributeValue> = fc.oneof(
  word,
  jsonish.map((value) => JSON.stringify(value) ?? 'null'),
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(word, fc.integer(), fc.boolean()), { maxLength: 4 }),
  fc.uint8Array({ maxLength: 4 }),
  jsonish.filter((value) => value !== null && typeof value === 'object') as fc.Arbitrary<AttributeValue>,
);

const attributes = fc.dictionary(key, attributeValue, { maxKeys: 8 });

const spanId = (index: number) => (index + 1).toString(16).padStart(16, '0');

/** Up to 8 spans; parents are another span, a span not in the trace, or none. */
const trace = fc.integer({ min: 1, max: 8 }).chain((count) =>
  fc.tuple(
    ...Array.from({ length: count }, (_, index) =>
      fc.record({
        parent: fc.oneof(fc.constant(undefined), fc.nat(count), fc.constant('ffffffffffffffff')),
        name: word,
        start: fc.bigInt({ min: 0n, max: 10_000n }),
        duration: fc.option(fc.bigInt({ min: 0n, max: 1_000n })),
        status: fc.constantFrom('unset', 'ok', 'error') as fc.Arbitrary<'unset' | 'ok' | 'error'>,
        attributes,
        events: fc.array(fc.record({ name: word, attributes }), { maxLength: 2 }),
        scope: word,
        index: fc.constant(index),
      }),
    ),
  ),
);

type GeneratedTrace = typeof trace extends fc.Arbitrary<infer T> ? T : never;

function toRecords(spans: GeneratedTrace): SpanRecord[] {
  return spans.map((span) => ({
    traceId: TRACE_ID,
    spanId: spanId(span.index),
    parentSpanId:
      span.parent === undefined
        ? undefined
        : typeof span.parent === 'number'
          ? spanId(span.parent)
          : span.parent,
    name: span.name,
    kind: 'internal',
    startTimeUnixNano: span.start,
    endTimeUnixNano: span.duration === null ? undefined : span.start + span.duration,
    status: { code: span.status },
    attributes: span.attributes,
    events: span.events.map((event, at) => ({ ...event, timeUnixNano: span.start + BigInt(at) })),
    links: [],
    resource: {},
    scope: { name: span.scope },
  }));
}

/** Every trace recorded from a real agent library, by convention (test/spans/). */
const RECORDED: SpanRecord[][] = readdirSync(FIXTURES)
  .filter((file) => file.endsWith('.otlp.json'))
  .flatMap((file) => {
    const spans = readStoredTraces(readFileSync(`${FIXTURES}${file}`, 'utf8'), file).input;
    if (spans?.format !== 'otlp-json') return [];
    return [...groupByTrace(spans.spans).values()];
  });

/** A JSON value with one place in it replaced (a message list whose part is a number, a role that is an object...). */
function replaceSomewhere(value: unknown, path: number[], by: unknown): unknown {
  if (path.length === 0 || value === null || typeof value !== 'object') return by;
  const [step, ...rest] = path as [number, ...number[]];
  if (Array.isArray(value)) {
    if (value.length === 0) return by;
    const copy = [...value];
    copy[step % copy.length] = replaceSomewhere(copy[step % copy.length], rest, by);
    return copy;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return by;
  const target = keys[step % keys.length] as string;
  return { ...value, [target]: replaceSomewhere((value as Record<string, unknown>)[target], rest, by) };
}

/** What a producer might have got wrong about one span. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('value' as const), span: fc.nat(), key: fc.nat(), value: attributeValue }),
  fc.record({
    kind: fc.constant('inside' as const),
    span: fc.nat(),
    key: fc.nat(),
    path: fc.array(fc.nat(), { maxLength: 4 }),
    value: jsonish,
  }),
  fc.record({ kind: fc.constant('drop-key' as const), span: fc.nat(), key: fc.nat() }),
  fc.record({ kind: fc.constant('add-key' as const), span: fc.nat(), key, value: attributeValue }),
  fc.record({ kind: fc.constant('parent' as const), span: fc.nat(), to: fc.option(fc.nat()) }),
  fc.record({ kind: fc.constant('name' as const), span: fc.nat(), name: word }),
  fc.record({ kind: fc.constant('open' as const), span: fc.nat() }),
  fc.record({ kind: fc.constant('drop-span' as const), span: fc.nat() }),
  fc.record({ kind: fc.constant('twin' as const), span: fc.nat() }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutated(recorded: readonly SpanRecord[], mutations: readonly Mutation[]): SpanRecord[] {
  const spans = recorded.map((span) => ({ ...span, attributes: { ...span.attributes } }));
  for (const change of mutations) {
    if (spans.length === 0) break;
    const at = change.span % spans.length;
    const span = spans[at] as SpanRecord;
    const keys = Object.keys(span.attributes);
    // Which of the span's own keys a change aims at (`add-key` names a new one instead).
    const aim = 'key' in change && typeof change.key === 'number' ? change.key : 0;
    const existing = keys.length === 0 ? undefined : (keys[aim % keys.length] as string);
    switch (change.kind) {
      case 'value':
        if (existing !== undefined) span.attributes[existing] = change.value;
        break;
      case 'inside': {
        const text = existing === undefined ? undefined : span.attributes[existing];
        if (typeof text !== 'string') break;
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          break;
        }
        span.attributes[existing as string] =
          JSON.stringify(replaceSomewhere(parsed, change.path, change.value)) ?? 'null';
        break;
      }
      case 'drop-key':
        if (existing !== undefined) delete span.attributes[existing];
        break;
      case 'add-key':
        span.attributes[change.key] = change.value;
        break;
      case 'parent':
        spans[at] = {
          ...span,
          parentSpanId:
            change.to === null ? undefined : (spans[change.to % spans.length] as SpanRecord).spanId,
        };
        break;
      case 'name':
        spans[at] = { ...span, name: change.name };
        break;
      case 'open':
        spans[at] = { ...span, endTimeUnixNano: undefined };
        break;
      case 'drop-span':
        spans.splice(at, 1);
        break;
      case 'twin':
        spans.push({ ...span, attributes: { ...span.attributes } });
        break;
    }
  }
  return spans;
}

describe('normalizing and evaluating odd spans', () => {
  it('reads the normalizers’ literals (the fuzzing vocabulary is not empty)', () => {
    expect(VOCABULARY).toEqual(expect.arrayContaining(['gen_ai.operation.name', 'execute_tool']));
  });

  it('never throws, and gives the same report twice', () => {
    let trajectories = 0;
    fc.assert(
      fc.property(trace, (spans) => {
        const records = toRecords(spans);
        const trajectory = normalizeTrace(TRACE_ID, records);
        if (trajectory === undefined) return;
        trajectories++;
        const report = evaluate(trajectory, SCENARIO);
        const again = evaluate(normalizeTrace(TRACE_ID, toRecords(spans)) ?? trajectory, SCENARIO);
        expect(JSON.stringify(again)).toBe(JSON.stringify(report));
      }),
      { numRuns: 3_000 },
    );
    // The property was checked on traces a convention claimed, not only on ones none did.
    expect(trajectories).toBeGreaterThan(100);
  });

  it('never throws on recorded traces a producer got wrong, and gives the same report twice', () => {
    expect(RECORDED.length).toBeGreaterThan(20);
    let trajectories = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...RECORDED),
        fc.array(mutation, { minLength: 1, maxLength: 6 }),
        (recorded, mutations) => {
          const trajectory = normalizeTrace(recorded[0]?.traceId ?? TRACE_ID, mutated(recorded, mutations));
          if (trajectory === undefined) return;
          trajectories++;
          const report = evaluate(trajectory, SCENARIO);
          const again = normalizeTrace(recorded[0]?.traceId ?? TRACE_ID, mutated(recorded, mutations));
          expect(JSON.stringify(evaluate(again ?? trajectory, SCENARIO))).toBe(JSON.stringify(report));
        },
      ),
      { numRuns: 3_000 },
    );
    expect(trajectories).toBeGreaterThan(2_000);
  });
});
