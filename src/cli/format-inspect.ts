/** `toolpath inspect --format pretty`: each trace's span tree, with what claimed each span and what it read. */
import { describeMcpServer } from '../evaluate/mcp.js';
import type { JsonValue } from '../model/json.js';
import type { InspectedSpan, InspectedTrace, ShownValue, SpanRead } from './inspect-trace.js';

/** Longest a value (arguments, results) is shown before it is cut. */
const VALUE_WIDTH = 60;
const NONE = '-';

/** The traces as text, one block each. */
export function formatInspectPretty(traces: readonly InspectedTrace[]): string {
  const out: string[] = [];
  for (const trace of traces) {
    out.push(`trace ${trace.traceId}`);
    out.push(`  ${summary(trace)}`);
    const depths = new Map<string, number>();
    for (const span of trace.spans) {
      const depth = span.parentSpanId === null ? 0 : (depths.get(span.parentSpanId) ?? -1) + 1;
      depths.set(span.spanId, depth);
      out.push(
        `  ${'  '.repeat(depth)}${span.name} [${span.spanId}] ${span.convention ?? NONE}${readText(span)}`,
      );
    }
    if (trace.warnings.length === 0) out.push('  warnings: none');
    else {
      out.push('  warnings:');
      for (const warning of trace.warnings) out.push(`    ${warning.kind}: ${warning.message}`);
    }
    out.push('');
  }
  return out.join('\n');
}

function summary(trace: InspectedTrace): string {
  const byConvention = new Map<string, number>();
  let calls = 0;
  let turns = 0;
  let runs = 0;
  for (const span of trace.spans) {
    if (span.convention !== null)
      byConvention.set(span.convention, (byConvention.get(span.convention) ?? 0) + 1);
    if (span.read?.kind === 'call') calls++;
    else if (span.read?.kind === 'turn') turns++;
    else if (span.read?.kind === 'agent') runs++;
  }
  const claimed = [...byConvention].map(([name, count]) => `${name} ${count}`).join(', ');
  return (
    `${plural(trace.spans.length, 'span')}: ${trace.spans.length - trace.unclaimed.length} claimed` +
    `${claimed ? ` (${claimed})` : ''}, ${trace.unclaimed.length} by no convention (${NONE}); ` +
    `read as ${plural(calls, 'call')}, ${plural(turns, 'turn')}, ${plural(runs, 'agent run')}`
  );
}

function readText(span: InspectedSpan): string {
  const read: SpanRead | null = span.read;
  if (read === null) return '';
  switch (read.kind) {
    case 'call': {
      const outcome =
        read.outcome.status === 'error'
          ? `error${read.outcome.errorType ? ` ${read.outcome.errorType}` : ''}${read.outcome.message ? `: ${cut(read.outcome.message)}` : ''}`
          : read.outcome.status;
      const by = read.turn ? `, asked by ${read.turn}` : ', asked by no turn read';
      const recorded = read.recordedArgs
        ? ` (as the model asked; the span recorded ${value(read.recordedArgs)})`
        : '';
      return `: call ${read.call} ${read.tool} args ${value(read.args)}${recorded} -> ${outcome}, result ${value(read.result)}${by}${read.agent ? `, agent ${read.agent}` : ''}${read.mcpServer ? `, to ${describeMcpServer(read.mcpServer)}` : ''}`;
    }
    case 'same-call':
      return `: the same ${read.tool} call as span ${read.outerSpanId} (${read.call})`;
    case 'turn': {
      const issued = read.issued.length === 0 ? 'no call' : read.issued.join(', ');
      const shown = read.consumed.length === 0 ? 'no result' : `results of ${read.consumed.join(', ')}`;
      return `: turn ${read.turn}${read.model ? ` (${read.model})` : ''} asked for ${issued}; shown ${shown}`;
    }
    case 'same-generation':
      return `: the same generation as span ${read.outerSpanId} (${read.turn})`;
    case 'agent':
      return `: agent run ${read.run}${read.name ? ` ${read.name}` : ''}`;
    case 'structure':
      return ': structure (read as nothing)';
  }
}

function value(shown: ShownValue): string {
  if (!shown.captured) return 'not recorded';
  const text = typeof shown.value === 'string' ? JSON.stringify(shown.value) : jsonText(shown.value);
  return `${cut(text)}${shown.parseError ? ' (not valid JSON)' : ''}`;
}

function jsonText(value: JsonValue): string {
  return JSON.stringify(value) ?? String(value);
}

function cut(text: string): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length <= VALUE_WIDTH ? line : `${line.slice(0, VALUE_WIDTH - 1)}…`;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}
