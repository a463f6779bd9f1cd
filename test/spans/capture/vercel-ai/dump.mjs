// Prints the span tree of OTLP JSON fixtures: node dump.mjs <file.otlp.json>... [--full]
// Attribute values longer than 160 characters are cut unless --full is given.

import { readFileSync } from 'node:fs';

const KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const STATUS = ['UNSET', 'OK', 'ERROR'];
const args = process.argv.slice(2);
const full = args.includes('--full');

function value(v) {
  if (v == null) return null;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return (v.arrayValue.values ?? []).map(value);
  return v;
}

function show(v) {
  const s = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v);
  return full || s.length <= 160 ? s : `${s.slice(0, 157)}...`;
}

for (const file of args.filter((a) => a !== '--full')) {
  const req = JSON.parse(readFileSync(file, 'utf8'));
  const spans = req.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => ({ ...s, scope: ss.scope }))),
  );
  const byParent = new Map();
  for (const s of spans) {
    const p = s.parentSpanId || '';
    if (!byParent.has(p)) byParent.set(p, []);
    byParent.get(p).push(s);
  }
  for (const list of byParent.values())
    list.sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
  const resource = req.resourceSpans[0].resource.attributes
    .map((a) => `${a.key}=${show(value(a.value))}`)
    .join(' ');
  console.log(`=== ${file} (${spans.length} spans) resource: ${resource}`);
  const walk = (parent, depth) => {
    for (const s of byParent.get(parent) ?? []) {
      const pad = '  '.repeat(depth);
      const status =
        STATUS[s.status?.code ?? 0] + (s.status?.message ? `(${JSON.stringify(s.status.message)})` : '');
      console.log(
        `${pad}- ${s.name} [${KINDS[s.kind]}] status=${status} span=${s.spanId} scope=${s.scope.name}`,
      );
      for (const a of s.attributes ?? []) console.log(`${pad}    ${a.key} = ${show(value(a.value))}`);
      for (const e of s.events ?? []) {
        console.log(
          `${pad}    event ${e.name}: ${(e.attributes ?? []).map((a) => `${a.key}=${show(value(a.value))}`).join(' ')}`,
        );
      }
      walk(s.spanId, depth + 1);
    }
  };
  walk('', 0);
  const ids = new Set(spans.map((s) => s.spanId));
  const orphans = spans.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId));
  if (orphans.length) console.log(`ORPHANS: ${orphans.map((s) => s.name).join(', ')}`);
}
