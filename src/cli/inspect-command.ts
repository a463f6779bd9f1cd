/**
 * `toolpath inspect INPUT... [--trace ID] [--format pretty|json]`: what toolpath read from each
 * trace, span by span: the convention that claimed it (or none), and the call, turn or agent run
 * it became; the spans no convention claimed; the reading's warnings. The first thing to run
 * when a verdict looks wrong, or on a framework toolpath may not read. Exit 0, or 2 on a usage
 * error or an input that cannot be read (named).
 */

import { formatInputError, readStoredTraces } from '../io/read-traces.js';
import { groupByTrace } from '../normalizers/normalize.js';
import { describeReadError } from '../scenario/read-error.js';
import { formatInspectPretty } from './format-inspect.js';
import { type InspectedTrace, inspectTrace } from './inspect-trace.js';
import { type CliIO, parseCommandLine, UsageError } from './io.js';

/** Usage text of `toolpath inspect`. */
export const INSPECT_USAGE = `usage: toolpath inspect INPUT... [--trace ID] [--format pretty|json]

  INPUT         stored traces (any input toolpath eval reads); - reads stdin
  --trace, -t   only the trace with this id (default: every trace of the inputs)
  --format, -f  pretty (default): each trace's span tree, what claimed each span and what it
                read; json: {traces: [{traceId, spans: [{spanId, parentSpanId, name,
                convention, read}], unclaimed, warnings}]}

run it first when a verdict looks wrong: a span marked - is one no convention read

exit status: 0 inspected, 2 usage or input error
`;

const FORMATS = ['pretty', 'json'] as const;
type Format = (typeof FORMATS)[number];

/** Runs `toolpath inspect` with these arguments (after the word `inspect`); resolves to the exit code. */
export async function inspectCommand(args: readonly string[], io: CliIO): Promise<number> {
  const options = parseInspectArgs(args);
  const traces: InspectedTrace[] = [];
  let failed = false;
  for (const source of options.inputs) {
    let text: string;
    try {
      text = source === '-' ? await io.readStdin() : await io.readFile(source);
    } catch (error) {
      io.stderr(`toolpath inspect: ${describeReadError(error, source)}\n`);
      failed = true;
      continue;
    }
    const read = readStoredTraces(text, source);
    if (read.errors.length > 0 || !read.input) {
      for (const error of read.errors) io.stderr(`toolpath inspect: ${formatInputError(error)}\n`);
      failed = true;
      continue;
    }
    if (read.input.format === 'typed-events') {
      io.stderr(`toolpath inspect: ${source}: typed events, not spans: nothing to inspect\n`);
      continue;
    }
    for (const [traceId, spans] of groupByTrace(read.input.spans)) {
      if (options.trace === undefined || traceId === options.trace) traces.push(inspectTrace(traceId, spans));
    }
  }
  if (options.trace !== undefined && traces.length === 0 && !failed) {
    io.stderr(`toolpath inspect: no trace ${options.trace} in ${options.inputs.join(', ')}\n`);
    return 2;
  }
  io.stdout(
    options.format === 'json' ? `${JSON.stringify({ traces }, null, 2)}\n` : formatInspectPretty(traces),
  );
  return failed ? 2 : 0;
}

interface InspectOptions {
  inputs: string[];
  trace?: string;
  format: Format;
}

function parseInspectArgs(args: readonly string[]): InspectOptions {
  const { values, positionals } = parseCommandLine({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: {
      trace: { type: 'string', short: 't' },
      format: { type: 'string', short: 'f' },
    },
  });
  if (positionals.length === 0)
    throw new UsageError('missing INPUT: give one or more trace files, or - for stdin');
  const format = values.format ?? 'pretty';
  if (!(FORMATS as readonly string[]).includes(format))
    throw new UsageError(`--format must be pretty or json, got "${format}"`);
  return {
    inputs: positionals,
    format: format as Format,
    ...(values.trace !== undefined && { trace: values.trace }),
  };
}
