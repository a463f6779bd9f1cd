/**
 * The pure half of `toolpath promote`: cut a trace down to the spans its trajectory was read
 * from, redact identifiers consistently, and write the rest back as an OTLP JSON request.
 * No I/O and no randomness here: the command hands in the redaction key.
 */
import { createHmac } from 'node:crypto';
import { nestedDeeperThan } from '../model/json-depth.js';
import type { Finding, Report } from '../model/report.js';
import type { Attributes, AttributeValue, SpanRecord } from '../model/span-record.js';
import type { Trajectory } from '../model/trajectory.js';

/** Attribute key prefixes some convention reads; every other span attribute is dropped. */
export const READ_PREFIXES: readonly string[] = [
  'gen_ai.',
  'ai.',
  'openinference.',
  'llm.',
  'tool.',
  'input.',
  'output.',
  'traceloop.',
  'langsmith.',
  'langfuse.',
  'mastra.',
  'gcp.vertex.agent.',
  'mcp.',
  'error.',
  'exception.',
];

/**
 * Keeps the spans the trajectory was read from (its root, agent runs, turns and tool calls) and
 * their ancestors, so every parent link still resolves. Span attributes are cut to
 * {@link READ_PREFIXES} plus `extraKeys` (root attributes a scenario's `appliesTo` matches);
 * resources to `service.name`. Events and links are kept whole (conventions read message
 * events); `redactSpans` cleans them.
 */
export function minimizeSpans(
  spans: readonly SpanRecord[],
  trajectory: Trajectory,
  extraKeys: readonly string[] = [],
): SpanRecord[] {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const read = [
    trajectory.root?.spanId,
    ...trajectory.agents.map((run) => run.spanId),
    ...trajectory.turns.map((turn) => turn.spanId),
    ...trajectory.calls.map((call) => call.spanId),
  ];
  const kept = new Set<string>();
  for (const start of read) {
    // Walk up to the root; stop at a span already kept (its ancestors are too).
    for (let id = start; id !== undefined && !kept.has(id); id = byId.get(id)?.parentSpanId) {
      if (!byId.has(id)) break;
      kept.add(id);
    }
  }
  return spans.filter((span) => kept.has(span.spanId)).map((span) => stripSpan(span, extraKeys));
}

/** A span with only the attributes a convention reads, and a resource with only `service.name`. */
export function stripSpan(span: SpanRecord, extraKeys: readonly string[] = []): SpanRecord {
  const attributes: Attributes = {};
  for (const [key, value] of Object.entries(span.attributes)) {
    if (READ_PREFIXES.some((prefix) => key.startsWith(prefix)) || extraKeys.includes(key))
      attributes[key] = value;
  }
  const service = span.resource['service.name'];
  return { ...span, attributes, resource: service === undefined ? {} : { 'service.name': service } };
}

// ---- redaction ------------------------------------------------------------------------------

/** What `--redact CONFIG` says: paths whose values are kept as they are, or hashed whole. */
export interface RedactConfig {
  keep?: readonly string[];
  hash?: readonly string[];
}

/**
 * What looks like an identifier, anywhere inside a string: an e-mail address, a UUID, a
 * prefixed token (letters, `-` or `_`, then letters and digits with at least one digit:
 * `R-1001`, `O-17`, `call_1`, `cus_9fA2`), letters run into 3 or more digits (`A1001`,
 * `INV2024`), or a run of 4 or more digits.
 */
const IDENTIFIER = new RegExp(
  [
    String.raw`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`,
    String.raw`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`,
    String.raw`\b[A-Za-z]{1,10}[-_](?=[A-Za-z0-9]*\d)[A-Za-z0-9]+\b`,
    String.raw`\b[A-Za-z]{1,10}\d{3,}[A-Za-z0-9]*\b`,
    String.raw`(?<!\w)\d{4,}(?!\w)`,
  ].join('|'),
  'g',
);
/** Trace and span ids (16 or 32 hex digits) are random, not personal: kept so references hold. */
const OTEL_ID = /^(?:[0-9a-f]{16}|[0-9a-f]{32})$/;
/** Attributes that name things rather than carry data (tools, agents, models, span kinds): kept. */
const STRUCTURAL_KEY = /(?:^|\.)(?:name|system|kind|type|role)$|model/;

/**
 * Replaces identifiers by `id_` + the first 10 hex digits of HMAC-SHA256(key, identifier): the
 * same identifier becomes the same token everywhere, so grounding (an argument equal to an
 * earlier result) still holds, and without the key nobody can test a guess against a token.
 */
export class Redactor {
  readonly #key: Uint8Array;
  readonly #keep: string[][];
  readonly #hash: string[][];

  constructor(key: Uint8Array, config: RedactConfig = {}) {
    this.#key = key;
    this.#keep = (config.keep ?? []).map(splitPath);
    this.#hash = (config.hash ?? []).map(splitPath);
  }

  /** The token for one identifier. */
  token(identifier: string): string {
    return `id_${createHmac('sha256', this.#key).update(identifier).digest('hex').slice(0, 10)}`;
  }

  /** Every identifier inside free text replaced by its token. */
  text(value: string): string {
    return OTEL_ID.test(value) ? value : value.replace(IDENTIFIER, (match) => this.token(match));
  }

  /**
   * An attribute value at `path` (the attribute key's dotted parts, then keys inside the value;
   * strings holding a JSON object or array are walked too). `hash` paths are hashed whole, `keep`
   * paths left as they are, every other string cleaned of identifiers.
   */
  value(value: AttributeValue, path: readonly string[]): AttributeValue {
    if (matches(this.#hash, path)) return this.#hashAll(value);
    if (matches(this.#keep, path)) return value;
    if (typeof value === 'string') {
      const json = parseJsonContainer(value);
      return json === undefined ? this.text(value) : JSON.stringify(this.value(json, path));
    }
    if (Array.isArray(value)) return value.map((item) => this.value(item, path));
    if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.value(v, [...path, k])]));
    }
    return value;
  }

  /** Attributes, each walked from its own key; structural ones (names, models, kinds) are kept unless hashed. */
  attributes(attributes: Attributes): Attributes {
    return Object.fromEntries(
      Object.entries(attributes).map(([key, value]) => {
        const path = key.split('.');
        const structural = STRUCTURAL_KEY.test(key) && !matches(this.#hash, path);
        return [key, structural ? value : this.value(value, path)];
      }),
    );
  }

  #hashAll(value: AttributeValue): AttributeValue {
    if (typeof value === 'string') {
      const json = parseJsonContainer(value);
      return json === undefined ? this.token(value) : JSON.stringify(this.#hashAll(json));
    }
    if (typeof value === 'number' || typeof value === 'boolean') return this.token(String(value));
    if (Array.isArray(value)) return value.map((item) => this.#hashAll(item));
    if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.#hashAll(v)]));
    }
    return value;
  }
}

/** Spans with every attribute, event, link attribute, span name and status message redacted. */
export function redactSpans(spans: readonly SpanRecord[], redactor: Redactor): SpanRecord[] {
  return spans.map((span) => {
    const message = span.status.message;
    return {
      ...span,
      name: redactor.text(span.name),
      status: message === undefined ? span.status : { ...span.status, message: redactor.text(message) },
      attributes: redactor.attributes(span.attributes),
      events: span.events.map((event) => ({ ...event, attributes: redactor.attributes(event.attributes) })),
      links: span.links.map((link) => ({ ...link, attributes: redactor.attributes(link.attributes) })),
    };
  });
}

function splitPath(path: string): string[] {
  return path.split('.').filter((part) => part !== '');
}

/** A config path matches a value whose path ends with it; `*` matches any one key. */
function matches(paths: readonly string[][], path: readonly string[]): boolean {
  return paths.some(
    (wanted) =>
      wanted.length > 0 &&
      wanted.length <= path.length &&
      wanted.every((part, i) => part === '*' || part === path[path.length - wanted.length + i]),
  );
}

/**
 * The JSON object or array a string holds, to be walked; undefined for other text, and for JSON
 * nested deeper than toolpath reads (cleaned as text instead: its identifiers are still replaced,
 * and it stays as deep, so the fixture is judged as the trace was).
 */
function parseJsonContainer(text: string): AttributeValue | undefined {
  const start = text.trimStart()[0];
  if (start !== '{' && start !== '[') return undefined;
  let parsed: AttributeValue;
  try {
    parsed = JSON.parse(text) as AttributeValue;
  } catch {
    return undefined;
  }
  return nestedDeeperThan(parsed) ? undefined : parsed;
}

export { encodeOtlpJson } from '../io/otlp-json-encode.js';

// ---- what the fixture must reproduce --------------------------------------------------------

/** One finding a fixture must reproduce. */
export interface ExpectedFinding {
  rule: string;
  severity: Finding['severity'];
  assertion?: string;
  calls: string[];
}

/** The `NAME.expected.json` beside a fixture. */
export interface ExpectedFindings {
  scenario: Report['scenario'];
  verdict: Report['verdict'];
  findings: ExpectedFinding[];
}

/** What a report says, as a fixture's expectation. */
export function expectedOf(report: Report): ExpectedFindings {
  return {
    scenario: report.scenario,
    verdict: report.verdict,
    findings: report.findings.map((f) => ({
      rule: f.rule,
      severity: f.severity,
      ...(f.assertion !== undefined && { assertion: f.assertion }),
      calls: f.calls,
    })),
  };
}

/**
 * How `actual` differs from `expected`, one line each; empty when the verdict and the findings
 * (rule, severity, assertion, as a multiset) are the same. Call ids are not compared: redaction
 * may rename them.
 */
export function differences(expected: ExpectedFindings, actual: ExpectedFindings): string[] {
  const out: string[] = [];
  if (expected.verdict !== actual.verdict)
    out.push(`verdict: expected ${expected.verdict}, got ${actual.verdict}`);
  const label = (f: ExpectedFinding) => `${f.rule} [${f.severity}]${f.assertion ? ` (${f.assertion})` : ''}`;
  const remaining = actual.findings.map(label);
  for (const wanted of expected.findings.map(label)) {
    const at = remaining.indexOf(wanted);
    if (at >= 0) remaining.splice(at, 1);
    else out.push(`missing finding ${wanted}`);
  }
  for (const extra of remaining) out.push(`unexpected finding ${extra}`);
  return out;
}
