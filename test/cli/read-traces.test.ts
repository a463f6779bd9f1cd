import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatInputError, type ReadResult, readStoredTraces } from '../../src/io/read-traces.js';
import type { SpanRecord } from '../../src/model/span-record.js';
import { jsonValue } from '../helpers/json-arbitraries.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '..', 'spans', name), 'utf8');

function spansOf(result: ReadResult): SpanRecord[] {
  if (!result.input || result.input.format === 'typed-events')
    throw new Error(`no spans in ${result.source}`);
  return result.input.spans;
}
const messages = (result: ReadResult) => result.errors.map(formatInputError);
/** JSON.parse's own message for a text, to compare with ours. */
function jsonParseMessage(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('text parsed');
}

describe('readStoredTraces detects the format by content', () => {
  it('reads one OTLP JSON request', () => {
    const result = readStoredTraces(fixture('sdk-genai-refund.otlp.json'), 'refund.otlp.json');
    expect(result.errors).toEqual([]);
    expect(result.input?.format).toBe('otlp-json');
    expect(spansOf(result)).toHaveLength(13);
    expect(
      spansOf(result)
        .filter((s) => s.parentSpanId === undefined)
        .map((s) => s.name),
    ).toEqual(['invoke_agent support-agent']);
  });

  it('reads an array of requests as one input with all their spans', () => {
    const result = readStoredTraces(fixture('sdk-genai-two-traces.otlp.json'), 'two.json');
    expect(result.errors).toEqual([]);
    expect(result.input?.format).toBe('otlp-json');
    const spans = spansOf(result);
    expect(spans).toHaveLength(6);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(2);
  });

  it('reads Collector file-exporter JSON lines, a trace split over two lines', () => {
    const text = fixture('sdk-genai-file-exporter.jsonl');
    const result = readStoredTraces(text, 'export.jsonl');
    expect(result.errors).toEqual([]);
    expect(result.input?.format).toBe('otlp-jsonl');
    const spans = spansOf(result);
    expect(spans).toHaveLength(19);
    const refund = readStoredTraces(fixture('sdk-genai-refund.otlp.json'), 'refund.json');
    const refundTraceId = spansOf(refund)[0]?.traceId;
    expect(spans.filter((s) => s.traceId === refundTraceId)).toHaveLength(13);
  });

  it('reads JSON lines with CRLF endings and blank lines, whatever the file is called', () => {
    const lines = fixture('sdk-genai-file-exporter.jsonl').trim().split('\n');
    const result = readStoredTraces(`\r\n${lines.join('\r\n\r\n')}\r\n`, 'traces.json');
    expect(result.errors).toEqual([]);
    expect(result.input?.format).toBe('otlp-jsonl');
    expect(spansOf(result)).toHaveLength(19);
  });

  it('reads typed call/result events exactly as written', () => {
    const text = fixture('typed-events-refund.json');
    const result = readStoredTraces(text, 'events.json');
    expect(result.errors).toEqual([]);
    expect(result.input).toEqual({ format: 'typed-events', events: JSON.parse(text) });
  });

  it('reads an empty list as typed events of a run that made no tool call', () => {
    for (const text of ['[]', ' [ ]\n', '\ufeff[]']) {
      const result = readStoredTraces(text, 'none.json');
      expect(result).toEqual({
        source: 'none.json',
        input: { format: 'typed-events', events: [] },
        errors: [],
      });
    }
  });

  it('keeps numbers in typed-event arguments as JSON numbers', () => {
    const text =
      '[{"kind":"call","id":"c1","tool":"t","args":{"intValue":12345678901234567890,"timeUnixNano":5}}]';
    const result = readStoredTraces(text, 'events.json');
    expect(result.input).toEqual({
      format: 'typed-events',
      events: [
        {
          kind: 'call',
          id: 'c1',
          tool: 't',
          args: { intValue: Number('12345678901234567890'), timeUnixNano: 5 },
        },
      ],
    });
  });

  it('skips a byte order mark', () => {
    const result = readStoredTraces(`\ufeff${fixture('typed-events-refund.json')}`, 'bom.json');
    expect(result.errors).toEqual([]);
    expect(result.input?.format).toBe('typed-events');
  });
});

describe('readStoredTraces errors', () => {
  it('says when there is nothing to read', () => {
    expect(messages(readStoredTraces('', 'empty.json'))).toEqual([
      'empty.json: no spans or events found: the file is empty',
    ]);
    expect(messages(readStoredTraces(' \n\t\n', 'blank.json'))).toEqual([
      'blank.json: no spans or events found: the file is empty',
    ]);
    expect(messages(readStoredTraces('{"resourceSpans":[]}', 'r.json'))).toEqual([
      'r.json: no spans or events found',
    ]);
    expect(
      messages(readStoredTraces('{"resourceSpans":[{"scopeSpans":[{"spans":[]}]}]}\n\n', 'r.jsonl')),
    ).toEqual(['r.jsonl: no spans or events found']);
  });

  it('reports truncated JSON with JSON.parse’s message, not a stack', () => {
    const text = fixture('sdk-genai-refund.otlp.json').slice(0, 5000);
    const result = readStoredTraces(text, 'cut.json');
    expect(result.input).toBeUndefined();
    expect(messages(result)).toEqual([`cut.json: not valid JSON: ${jsonParseMessage(text)}`]);
    expect(messages(result)[0]).not.toContain('\n');
  });

  it('reports a cut last line of JSON lines by line number and keeps the lines before', () => {
    const text = fixture('sdk-genai-file-exporter.jsonl').trimEnd().slice(0, -200);
    const result = readStoredTraces(text, 'export.jsonl');
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]?.location).toBe('line 4');
    expect(messages(result)[0]).toMatch(/^export\.jsonl:4: not valid JSON: /);
    expect(spansOf(result)).toHaveLength(17);
  });

  it('names the span of a bad id and still returns the other spans', () => {
    const document = JSON.parse(fixture('sdk-genai-refund.otlp.json'));
    const bad = document.resourceSpans[0].scopeSpans[1].spans[3];
    bad.spanId = Buffer.from(bad.spanId, 'hex').toString('base64');
    const result = readStoredTraces(JSON.stringify(document), 'refund.json');
    expect(messages(result)).toEqual([
      `refund.json: resourceSpans[0].scopeSpans[1].spans[3].spanId: expected 16 hex characters, got "${bad.spanId}" (12 characters); OTLP JSON ids are hex, not base64`,
    ]);
    expect(spansOf(result)).toHaveLength(12);
  });

  it('prefixes errors in an array of requests with the request’s index', () => {
    const [agent, http] = JSON.parse(fixture('sdk-genai-two-traces.otlp.json'));
    http.resourceSpans[0].scopeSpans[0].spans[0].traceId = '0'.repeat(32);
    const result = readStoredTraces(JSON.stringify([agent, http, { nope: 1 }]), 'two.json');
    expect(messages(result)).toEqual([
      'two.json: [1].resourceSpans[0].scopeSpans[0].spans[0].traceId: an all-zero trace id is invalid',
      'two.json: [2]: expected an ExportTraceServiceRequest like the first item, got an object with keys "nope"',
    ]);
    expect(spansOf(result)).toHaveLength(5);
  });

  it('gives a JSON-lines span error its line and its path', () => {
    const lines = fixture('sdk-genai-file-exporter.jsonl').trim().split('\n');
    const third = JSON.parse(lines[2] as string);
    third.resourceSpans[0].scopeSpans[0].spans[0].name = 42;
    lines[2] = JSON.stringify(third);
    const result = readStoredTraces(lines.join('\n'), 'export.jsonl');
    expect(messages(result)).toEqual([
      'export.jsonl:3: resourceSpans[0].scopeSpans[0].spans[0].name: expected a string, got number 42',
    ]);
  });

  it('explains a document that is not a trace', () => {
    const expected =
      'expected OTLP JSON (an object with "resourceSpans", an array of them, or an array of OTLP spans), Collector file-exporter JSON lines, ' +
      'or an array of typed events ({"kind": "call" | "result" | "decision", ...})';
    expect(messages(readStoredTraces('{"data":[],"total":0}', 'x.json'))).toEqual([
      `x.json: ${expected}; got an object with keys "data", "total"`,
    ]);
    expect(messages(readStoredTraces('[1, 2]', 'x.json'))).toEqual([
      `x.json: ${expected}; got an array whose first item is number`,
    ]);
    expect(messages(readStoredTraces('{"resource_spans":[]}', 'x.json'))[0]).toContain(
      'OTLP JSON field names are lowerCamelCase: "resourceSpans"',
    );
  });

  it('validates typed events strictly, naming the index and the field', () => {
    const events = [
      { kind: 'call', id: 'c1', tool: 'get_order', args: { order_id: 'ORD-20417' }, note: 'extra' },
      { kind: 'call', id: '', tool: 'get_refund_policy', args: {} },
      { kind: 'call', id: 'c3', tool: 'issue_refund' },
      { kind: 'result', callId: 'c1', ok: 'true', output: {} },
      { kind: 'answer', text: 'done' },
      { kind: 'result', callId: 'c1', ok: true, output: [] },
    ];
    const result = readStoredTraces(JSON.stringify(events), 'events.json');
    expect(result.input).toBeUndefined();
    expect(messages(result)).toEqual([
      'events.json: [0]: unknown field "note"; a call has kind, id, tool, args',
      'events.json: [1].id: must not be empty',
      'events.json: [2].args: expected an object; got nothing',
      'events.json: [3].ok: expected boolean, got string',
      'events.json: [4].kind: expected "call", "result" or "decision", got "answer"',
      'events.json: [5].output: expected an object; got an empty list',
    ]);
  });

  it('checks that results answer earlier calls, once', () => {
    const events = [
      { kind: 'result', callId: 'c1', ok: true, output: {} },
      { kind: 'call', id: 'c1', tool: 'get_order', args: {} },
      { kind: 'call', id: 'c1', tool: 'get_order', args: {} },
      { kind: 'result', callId: 'c1', ok: true, output: {} },
      { kind: 'result', callId: 'c1', ok: false, output: { error: 'again' } },
    ];
    const result = readStoredTraces(JSON.stringify(events), 'events.json');
    expect(messages(result)).toEqual([
      'events.json: [0].callId: no earlier call has id "c1"',
      'events.json: [2].id: call id "c1" is already used by [1]',
      'events.json: [4].callId: call "c1" already has a result at [3]',
    ]);
    expect(result.input?.format).toBe('typed-events');
  });

  it('reads decisions on earlier calls, and names a decision on no call or with another outcome', () => {
    const good = [
      { kind: 'call', id: 'c1', tool: 'issue_refund', args: {} },
      { kind: 'decision', callId: 'c1', outcome: 'deny' },
    ];
    const read = readStoredTraces(JSON.stringify(good), 'events.json');
    expect(read.errors).toEqual([]);
    expect(read.input).toEqual({ format: 'typed-events', events: good });
    const bad = [
      { kind: 'decision', callId: 'c9', outcome: 'allow' },
      { kind: 'call', id: 'c1', tool: 'issue_refund', args: {} },
      { kind: 'decision', callId: 'c1', outcome: 'maybe' },
      { kind: 'decision', callId: 'c1', outcome: 'deny', why: 'policy' },
    ];
    const messagesOf = messages(readStoredTraces(JSON.stringify(bad), 'events.json'));
    expect(messagesOf).toHaveLength(2);
    expect(messagesOf[0]).toMatch(/^events\.json: \[2\]\.outcome: .*allow.*deny.*require_approval/);
    expect(messagesOf[1]).toBe('events.json: [3]: unknown field "why"; a decision has kind, callId, outcome');
    const unknownCall = readStoredTraces(JSON.stringify(bad.slice(0, 2)), 'events.json');
    expect(messages(unknownCall)).toEqual(['events.json: [0].callId: no earlier call has id "c9"']);
  });
});

describe('formatInputError', () => {
  it('writes a path location after the file and a line location as file:line', () => {
    expect(formatInputError({ source: 'a.json', message: 'no spans or events found' })).toBe(
      'a.json: no spans or events found',
    );
    expect(
      formatInputError({ source: 'a.json', location: '[3].ok', message: 'expected boolean, got string' }),
    ).toBe('a.json: [3].ok: expected boolean, got string');
    expect(formatInputError({ source: 'b.jsonl', location: 'line 3', message: 'not valid JSON: x' })).toBe(
      'b.jsonl:3: not valid JSON: x',
    );
  });
});

describe('__proto__ in arguments and results is an ordinary key', () => {
  it('typed events keep it as an own key of args and output', () => {
    const text =
      '[{"kind":"call","id":"c1","tool":"t","args":{"__proto__":{"tenant":"B"},"x":1}},' +
      '{"kind":"result","callId":"c1","ok":true,"output":{"__proto__":{"refund_id":"R-9"}}}]';
    const read = readStoredTraces(text, 'p.json');
    if (read.input?.format !== 'typed-events') throw new Error('not typed events');
    const [call, result] = read.input.events;
    if (call?.kind !== 'call' || result?.kind !== 'result') throw new Error('unexpected events');
    expect(Object.keys(call.args)).toEqual(['__proto__', 'x']);
    expect(Object.getPrototypeOf(call.args)).toBe(Object.prototype);
    expect(Object.keys(result.output)).toEqual(['__proto__']);
  });
});

describe('a bare JSON array of OTLP spans', () => {
  /** The spans of a real SDK export, without the requests, resources and scopes around them. */
  const bareSpans = (): Record<string, unknown>[] =>
    JSON.parse(fixture('sdk-genai-refund.otlp.json')).resourceSpans.flatMap(
      (resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }) =>
        resourceSpans.scopeSpans.flatMap((scopeSpans) => scopeSpans.spans),
    );
  /** A span as read, without what only the request around it says. */
  const withoutContext = ({ resource: _r, scope: _s, ...span }: SpanRecord) => span;

  it('reads as the same spans as the request they came from, with resource and scope unknown', () => {
    const fromRequest = spansOf(readStoredTraces(fixture('sdk-genai-refund.otlp.json'), 'refund.json'));
    const result = readStoredTraces(JSON.stringify(bareSpans()), 'spans.json');
    expect(result.errors).toEqual([]);
    expect(result.input?.format).toBe('otlp-json');
    const spans = spansOf(result);
    expect(spans.map(withoutContext)).toEqual(fromRequest.map(withoutContext));
    expect(spans.every((span) => Object.keys(span.resource).length === 0)).toBe(true);
  });

  it('names the item of a bad span, once, and still returns the others', () => {
    const spans = bareSpans();
    const bad = spans[3] as Record<string, unknown>;
    bad.spanId = Buffer.from(bad.spanId as string, 'hex').toString('base64');
    spans.push(7 as unknown as Record<string, unknown>);
    const result = readStoredTraces(JSON.stringify(spans), 'spans.json');
    expect(messages(result)).toEqual([
      `spans.json: [3].spanId: expected 16 hex characters, got "${bad.spanId}" (12 characters); OTLP JSON ids are hex, not base64`,
      expect.stringMatching(/^spans\.json: \[13\]: /),
    ]);
    expect(spansOf(result)).toHaveLength(12);
  });

  it('a mix of spans and typed events is one error naming both, not one per item', () => {
    const mixed = [...bareSpans(), { kind: 'call', id: 'c1', tool: 'get_order', args: {} }];
    expect(messages(readStoredTraces(JSON.stringify(mixed), 'mixed.json'))).toEqual([
      'mixed.json: an array mixing OTLP spans ([0]) with typed events ([13]): give one format per file',
    ]);
  });

  it('property: any non-empty selection of spans reads as exactly those spans, in order', () => {
    const all = bareSpans();
    fc.assert(
      fc.property(fc.shuffledSubarray(all, { minLength: 1 }), (picked) => {
        const result = readStoredTraces(JSON.stringify(picked), 'spans.json');
        expect(result.errors).toEqual([]);
        expect(spansOf(result).map((span) => span.spanId)).toEqual(picked.map((span) => span.spanId));
      }),
    );
  });

  it('property: typed events still read as typed events, and spans with any extra items never as events', () => {
    const call = fc.record({
      kind: fc.constant('call'),
      id: fc.string({ minLength: 1 }),
      tool: fc.string({ minLength: 1 }),
      args: fc.constant({}),
    });
    fc.assert(
      fc.property(fc.uniqueArray(call, { selector: (event) => event.id, maxLength: 5 }), (events) => {
        const result = readStoredTraces(JSON.stringify(events), 'events.json');
        expect(result.errors).toEqual([]);
        expect(result.input).toEqual({ format: 'typed-events', events });
      }),
    );
    const all = bareSpans();
    fc.assert(
      fc.property(fc.array(jsonValue, { maxLength: 4 }), fc.nat(all.length), (extra, at) => {
        const items = [...all.slice(0, at), ...extra, ...all.slice(at)];
        const result = readStoredTraces(JSON.stringify(items), 'spans.json');
        for (const message of messages(result)) expect(message).not.toContain('expected "call"');
        expect(result.errors.length).toBeLessThanOrEqual(101);
      }),
    );
  });
});
