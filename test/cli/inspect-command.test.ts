/**
 * `toolpath inspect` on every trace of the shared corpus, in both formats: each span once, under
 * its parent, with the convention that claimed it and what it became, checked against what each
 * trace must read as (test/helpers/corpus-readings.ts, written from the raw spans); and bad input.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type InspectedTrace, inspectTrace } from '../../src/cli/inspect-trace.js';
import { UNREAD_TOOL_ACTIVITY } from '../../src/model/trajectory.js';
import { CONVENTIONS } from '../../src/normalizers/conventions.js';
import { runCli } from '../helpers/cli.js';
import {
  CORPUS_FILES,
  CORPUS_NOTE,
  corpusPath,
  corpusSpans,
  describeCorpusEach,
  itCorpus,
} from '../helpers/corpus.js';
import { LOGFIRE_AGENTS, TRACES } from '../helpers/corpus-readings.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

async function inspectJson(...args: string[]): Promise<InspectedTrace[]> {
  const run = await runCli(['inspect', '--format', 'json', ...args]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return (JSON.parse(run.stdout) as { traces: InspectedTrace[] }).traces;
}

describeCorpusEach(CORPUS_FILES)('toolpath inspect %s', (file) => {
  const spans = corpusSpans(file);

  it('lists every span of every trace once, under its parent, with what claimed it', async () => {
    const traces = await inspectJson(corpusPath(file));
    expect(traces.map((trace) => trace.traceId).sort()).toEqual(
      [...new Set(spans.map((s) => s.traceId))].sort(),
    );
    for (const trace of traces) {
      const own = spans.filter((span) => span.traceId === trace.traceId);
      expect(trace.spans.map((span) => span.spanId).sort()).toEqual(own.map((span) => span.spanId).sort());
      const listed = new Set<string>();
      for (const span of trace.spans) {
        const raw = own.find((candidate) => candidate.spanId === span.spanId);
        expect({ name: span.name, parentSpanId: span.parentSpanId }).toEqual({
          name: raw?.name,
          parentSpanId: raw?.parentSpanId ?? null,
        });
        // A tree: a parent in the trace comes before its children.
        if (span.parentSpanId !== null && own.some((candidate) => candidate.spanId === span.parentSpanId))
          expect(listed.has(span.parentSpanId), span.spanId).toBe(true);
        listed.add(span.spanId);
        expect(span.convention === null, span.spanId).toBe(span.read === null);
      }
      expect(trace.unclaimed).toEqual(
        trace.spans.filter((span) => span.convention === null).map((s) => s.spanId),
      );
    }
  });

  it('draws the same tree in the pretty format, one line per span, with what claimed it', async () => {
    const run = await runCli(['inspect', corpusPath(file)]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const traces = await inspectJson(corpusPath(file));
    const lines = run.stdout.split('\n');
    for (const trace of traces) {
      const at = lines.indexOf(`trace ${trace.traceId}`);
      expect(at).toBeGreaterThanOrEqual(0);
      const block = lines.slice(at + 2, at + 2 + trace.spans.length);
      trace.spans.forEach((span, k) => {
        const line = (block[k] as string).trimStart();
        expect(line.startsWith(`${span.name} [${span.spanId}] ${span.convention ?? '-'}`), line).toBe(true);
        if (span.read?.kind === 'call')
          expect(line).toContain(`: call ${span.read.call} ${span.read.tool} args `);
        if (span.read?.kind === 'turn') expect(line).toContain(`: turn ${span.read.turn}`);
      });
      // Children are drawn deeper than their parent.
      const depthOf = (line: string) => line.length - line.trimStart().length;
      trace.spans.forEach((span, k) => {
        const parent = trace.spans.findIndex((candidate) => candidate.spanId === span.parentSpanId);
        if (parent !== -1) expect(depthOf(block[k] as string)).toBe(depthOf(block[parent] as string) + 2);
      });
    }
  });
});

describeCorpusEach(TRACES)('toolpath inspect $file, against what it must read as', (expected) => {
  it('shows the calls, turns and agent runs the trace reads as, and the spans of the same ones', async () => {
    const [trace] = (await inspectJson(corpusPath(expected.file))).filter(
      (candidate) => candidate.traceId === expected.traceId,
    );
    const reads = trace?.spans ?? [];
    const calls = reads.flatMap((span) =>
      span.read?.kind === 'call' ? [[span.read.call, span.read.tool]] : [],
    );
    // A call no span records (a request read from its turn) is shown in the turn that asked.
    const asked = reads.flatMap((span) => (span.read?.kind === 'turn' ? span.read.issued : []));
    const bySpan = new Set(calls.map(([id]) => id));
    expect(
      [...calls, ...asked.filter((id) => !bySpan.has(id)).map((id) => [id, expected.calls[id]?.tool])].sort(),
    ).toEqual(
      Object.entries(expected.calls)
        .map(([id, call]) => [id, call.tool])
        .sort(),
    );
    const turns = reads.flatMap((span) => (span.read?.kind === 'turn' ? [span.spanId] : []));
    const wantTurns = expected.runs.flatMap((run) => run.turns.map((turn) => turn.spanId));
    expect(turns.sort()).toEqual([...wantTurns].sort());
    for (const want of expected.runs.flatMap((run) => run.turns)) {
      const read = reads.find((span) => span.spanId === want.spanId)?.read;
      expect(read?.kind === 'turn' && read.issued).toEqual(want.issued);
    }
    // Every other span a convention read as a turn or a call is the same one as one of these.
    for (const span of reads) {
      if (span.read?.kind === 'same-generation') expect(wantTurns).toContain(span.read.outerSpanId);
      if (span.read?.kind === 'same-call') expect(Object.keys(expected.calls)).toContain(span.read.call);
    }
    const runs = reads.flatMap((span) => (span.read?.kind === 'agent' ? [span.spanId] : []));
    for (const run of expected.runs) if (run.spanId !== '') expect(runs).toContain(run.spanId);
    expect(trace?.warnings.map((warning: { kind: string }) => warning.kind)).toEqual(expected.warnings ?? []);
  });
});

describeCorpusEach(LOGFIRE_AGENTS)('inspecting %s with no convention of its own', (file, toolSpans) => {
  // After the merge the list holds a convention for these traces: it is left out by name.
  const withoutLogfireAgents = CONVENTIONS.filter(
    (convention) => convention.name !== 'openai-agents-logfire',
  );

  it('shows its tool spans as unclaimed, and the warning naming them', () => {
    const spans = corpusSpans(file);
    const traceId = spans.find((span) => span.spanId === toolSpans[0])?.traceId as string;
    const trace = inspectTrace(
      traceId,
      spans.filter((span) => span.traceId === traceId),
      withoutLogfireAgents,
    );
    for (const spanId of toolSpans) expect(trace.unclaimed).toContain(spanId);
    for (const spanId of toolSpans)
      expect(trace.spans.find((span) => span.spanId === spanId)).toMatchObject({
        convention: null,
        read: null,
      });
    expect(trace.warnings.find((warning) => warning.kind === UNREAD_TOOL_ACTIVITY)?.spanIds).toEqual(
      toolSpans,
    );
  });
});

describe('toolpath inspect, otherwise', () => {
  let dir: string;
  beforeAll(() => {
    dir = temporaryDir('toolpath-inspect-test-');
  });

  itCorpus(
    `picks one trace with --trace, and says which traces there are when none matches${CORPUS_NOTE}`,
    async () => {
      const joker = corpusPath('pydantic-ai-mcp-logfire/joker-mcp-sampling.otlp.json');
      const traces = await inspectJson('--trace', '00000000000000000000000000000002', joker);
      expect(traces.map((trace) => trace.traceId)).toEqual(['00000000000000000000000000000002']);
      const missing = await runCli(['inspect', '-t', 'ffffffffffffffffffffffffffffffff', joker]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain(`no trace ffffffffffffffffffffffffffffffff in ${joker}`);
    },
  );

  it('shows the MCP server each call went to, and when the trace does not name it', async () => {
    const fixture = (name: string) => new URL(`../spans/${name}.otlp.json`, import.meta.url).pathname;
    const run = await runCli([
      'inspect',
      fixture('sdk-genai-mcp-two-servers'),
      fixture('openinference-openai-agents-mcp'),
    ]);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines.find((line) => line.includes(': call call_cmd run_command'))).toMatch(
      /, to MCP server 127\.0\.0\.1:\d+$/,
    );
    expect(lines.find((line) => line.includes(': call call_delete delete_repo'))).toMatch(
      /, to an MCP server the trace does not name$/,
    );
    const [trace] = await inspectJson(fixture('sdk-genai-mcp-two-servers'));
    const read = trace?.spans.find(
      (span) => span.read?.kind === 'call' && span.read.tool === 'list_repos',
    )?.read;
    expect(read).toMatchObject({ mcpServer: { address: 'localhost', transport: 'tcp' } });
  });

  itCorpus(`reads several inputs and stdin${CORPUS_NOTE}`, async () => {
    const strands = 'strands-python/strands-1.14-get-user-location.otlp.json';
    const claude = 'claude-agent-sdk-logfire/bash-ls.otlp.json';
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(corpusPath(claude), 'utf8');
    const run = await runCli(['inspect', '-f', 'json', corpusPath(strands), '-'], text);
    expect(run.code).toBe(0);
    const traces = (JSON.parse(run.stdout) as { traces: InspectedTrace[] }).traces;
    expect(traces.map((trace) => trace.traceId)).toEqual([
      '4152d1fb2c48ff87d75abb96470b13d3',
      '00000000000000000000000000000001',
    ]);
  });

  itCorpus(
    `exits 2 naming the file that cannot be read, and still shows the others${CORPUS_NOTE}`,
    async () => {
      const broken = join(dir, 'broken.otlp.json');
      await writeFile(broken, '{"resourceSpans": [');
      const good = corpusPath('claude-agent-sdk-logfire/bash-ls.otlp.json');
      const run = await runCli(['inspect', broken, join(dir, 'missing.json'), good]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`toolpath inspect: ${broken}: not valid JSON`);
      expect(run.stderr).toContain(`toolpath inspect: no such file: ${join(dir, 'missing.json')}`);
      expect(run.stdout).toContain('trace 00000000000000000000000000000001');
    },
  );

  it('refuses an unknown format and a missing input with its usage', async () => {
    const format = await runCli(['inspect', '--format', 'yaml', 'x.json']);
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--format must be pretty or json, got "yaml"');
    expect(format.stderr).toContain('usage: toolpath inspect');
    const none = await runCli(['inspect']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('missing INPUT');
  });

  it('says typed events have no spans to inspect', async () => {
    const events = join(dir, 'events.json');
    await writeFile(events, JSON.stringify([{ kind: 'call', id: 'c1', tool: 'get_order', args: {} }]));
    const run = await runCli(['inspect', events]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`${events}: typed events, not spans: nothing to inspect`);
  });

  it('is listed in the help', async () => {
    const help = await runCli(['--help']);
    expect(help.stdout).toMatch(/\n {2}inspect +show what toolpath read from each span/);
  });
});
