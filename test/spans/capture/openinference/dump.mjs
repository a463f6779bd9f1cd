// Prints the span tree of OTLP JSON fixtures: name, kind, status, events, attributes.
// Usage: node dump.mjs ../../openinference-*.otlp.json [--short]
import { readFileSync } from 'node:fs';

const KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const STATUS = ['UNSET', 'OK', 'ERROR'];
const short = process.argv.includes('--short');
const maxLen = short ? 90 : 400;

function value(v) {
  if (v == null) return 'null';
  if ('stringValue' in v) return JSON.stringify(v.stringValue);
  if ('intValue' in v) return String(v.intValue);
  if ('doubleValue' in v) return String(v.doubleValue);
  if ('boolValue' in v) return String(v.boolValue);
  if ('arrayValue' in v) return `[${(v.arrayValue.values ?? []).map(value).join(', ')}]`;
  return JSON.stringify(v);
}
const clip = (s) => (s.length > maxLen ? `${s.slice(0, maxLen)}…(${s.length})` : s);

for (const file of process.argv.slice(2).filter((a) => !a.startsWith('--'))) {
  const req = JSON.parse(readFileSync(file, 'utf8'));
  console.log(`\n##### ${file}`);
  const spans = [];
  for (const rs of req.resourceSpans) {
    console.log('resource:', rs.resource.attributes.map((a) => `${a.key}=${value(a.value)}`).join(' '));
    for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, scope: ss.scope });
  }
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map();
  for (const s of spans) {
    const p = s.parentSpanId && ids.has(s.parentSpanId) ? s.parentSpanId : '';
    if (!children.has(p)) children.set(p, []);
    children.get(p).push(s);
  }
  const walk = (p, depth) => {
    for (const s of children.get(p) ?? []) {
      const pad = '  '.repeat(depth);
      const st = s.status?.code
        ? `${STATUS[s.status.code]}${s.status.message ? `(${s.status.message})` : ''}`
        : 'UNSET';
      console.log(
        `${pad}- "${s.name}" kind=${KINDS[s.kind]} status=${st} span=${s.spanId} parent=${s.parentSpanId || '-'} scope=${s.scope.name}@${s.scope.version}`,
      );
      for (const a of s.attributes ?? []) console.log(`${pad}    ${a.key} = ${clip(value(a.value))}`);
      for (const e of s.events ?? [])
        console.log(
          `${pad}    [event ${e.name}] ${(e.attributes ?? []).map((a) => `${a.key}=${clip(value(a.value))}`).join(' ')}`,
        );
      walk(s.spanId, depth + 1);
    }
  };
  walk('', 0);
}
