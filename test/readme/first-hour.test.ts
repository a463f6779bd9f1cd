/**
 * A new user's first hour, replayed: the demo, `init` into a scratch project, eval of a trace
 * with no agent spans, a mistyped option, a missing file, a broken scenario. Each message must
 * say what is wrong, where, and how to fix it, in the CLI's words (no errno names, no parser
 * or schema library wording, no stack).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

/** What no message a user reads may contain: the library's wording instead of ours. */
const RAW = /ENOENT|EACCES|Invalid input|received (string|number)|Unknown option|parseArgs|\n\s+at \S+ \(/;

let dir: string;
let project: string;
let scenario: string;

beforeAll(async () => {
  dir = temporaryDir('toolpath-first-hour-');
  project = join(dir, 'my-app');
  scenario = join(project, 'toolpath/scenario.yaml');
});

describe('the first hour', () => {
  it('1. the demo shows a pass, two failures and why, and the command to run again', async () => {
    const run = await runCli(['demo', '--keep', join(dir, 'demo')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^FAIL .*refund-before-policy/m);
    expect(run.stdout).toMatch(/x order\.before\[0\]: issue_refund /);
    expect(run.stdout).toMatch(/x grounding[^\n]*R-7731/);
    expect(run.stdout).toContain(`npx toolpath eval --scenario ${join(dir, 'demo')}/refund-scenario.json`);
  });

  it('2. init writes a starter project and says what to do next', async () => {
    await writeFile(join(dir, 'package.json'), '{}');
    const run = await runCli(['init', project]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    for (const file of [
      'toolpath/scenario.yaml',
      'toolpath/scenario.schema.json',
      'test/toolpath.test.ts',
      'toolpath/tracing.ts',
    ])
      expect(run.stdout).toContain(file);
    expect(await readFile(scenario, 'utf8')).toContain('id: my-agent.refund');
  });

  it('3. eval of a trace with no agent spans says none were recognized and names toolpath inspect', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('my-app');
    const root = tracer.startSpan('POST /chat', { kind: SpanKind.SERVER });
    tracer.startSpan('fetch api.example.test', {}, trace.setSpan(context.active(), root)).end();
    root.end();
    const plain = join(dir, 'plain.json');
    await writeFile(
      plain,
      new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans())),
    );
    const run = await runCli(['eval', '-s', scenario, plain]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`no agent or tool spans recognized in the trace`);
    expect(run.stdout).toContain(`run toolpath inspect ${plain} to see what was read from each span`);
    expect(run.stdout + run.stderr).not.toMatch(RAW);
  });

  it('4. a mistyped option names the option meant', async () => {
    const run = await runCli(['eval', '--scenrio', scenario, 'trace.json']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^toolpath eval: unknown option --scenrio \(did you mean --scenario\?\); its options: /,
    );
    expect(run.stderr).not.toMatch(RAW);
  });

  it('5. a missing file is named whole, in words', async () => {
    const missing = join(dir, 'traces/refund.json');
    const input = await runCli(['eval', '-s', scenario, missing]);
    expect(input.code).toBe(2);
    expect(input.stdout).toContain(`no such file: ${missing} (check the path and the working directory)`);
    const noScenario = await runCli(['eval', '-s', join(dir, 'refund.yaml'), missing]);
    expect(noScenario.code).toBe(2);
    expect(noScenario.stderr).toContain(
      `scenario ${join(dir, 'refund.yaml')}: no such file: ${join(dir, 'refund.yaml')}`,
    );
    expect(input.stdout + input.stderr + noScenario.stderr).not.toMatch(RAW);
  });

  it('6. a broken scenario: the line of a YAML slip, the key meant, the type expected', async () => {
    const starter = await readFile(scenario, 'utf8');
    const lines = starter.split('\n');
    const allowedLine = lines.findIndex((line) => line.trimStart().startsWith('allowed:')) + 1;
    const cases: [string, RegExp][] = [
      // An unclosed list: named on its own line, not the next one.
      [
        starter.replace(/allowed: \[([^\]]*)\]/, 'allowed: [$1'),
        new RegExp(`not valid YAML or JSON: line ${allowedLine}, column \\d+: `),
      ],
      [starter.replace('allowed:', 'alowed:'), /tools: unknown key "alowed" \(did you mean allowed\?\)/],
      [
        starter.replace(/^version: 1$/m, 'version: [1]'),
        /version: expected a string or a number; got a list$/m,
      ],
    ];
    for (const [text, message] of cases) {
      const broken = join(dir, 'broken.yaml');
      await writeFile(broken, text);
      const run = await runCli(['eval', '-s', broken, 'trace.json']);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(new RegExp(`^toolpath eval: scenario ${broken}: `));
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(RAW);
    }
  });
});
