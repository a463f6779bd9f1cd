import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/io.js';
import { promoteCommand } from '../../src/cli/promote-command.js';
import { Redactor } from '../../src/cli/promote-fixture.js';
import { runEval } from '../../src/cli/run-eval.js';
import { captureDemoTraces } from '../../src/demo/capture.js';
import { DEMO_SCENARIO } from '../../src/demo/conversations.js';
import { readStoredTraces } from '../../src/io/read-traces.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { captureIO } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

/** Identifiers the demo's traces carry: order, refund ids (real and made up), the customer's e-mail. */
const RAW_IDENTIFIERS = ['O-17', 'R-1001', 'R-7731', 'sam@example.test', 'example.test'];

let dir: string;
let scenarioPath: string;
const traces: Record<string, string> = {};
const scenario = parseScenario(DEMO_SCENARIO, 'demo.json');

beforeAll(async () => {
  dir = temporaryDir('toolpath-promote-test-');
  scenarioPath = join(dir, 'scenario.json');
  await writeFile(scenarioPath, JSON.stringify(DEMO_SCENARIO));
  for (const trace of await captureDemoTraces()) {
    const path = join(dir, `${trace.conversation.name}.otlp.json`);
    await writeFile(path, trace.otlpJson);
    traces[trace.conversation.name] = path;
  }
});

async function promote(args: string[]): Promise<{ code: number; stderr: string }> {
  const { io, output } = captureIO();
  return { code: await promoteCommand(args, io), stderr: output.stderr };
}

/** What `eval` makes of a file: verdict, and the findings as `rule (assertion)`. */
async function evaluated(path: string) {
  const run = runEval([{ source: path, text: await readFile(path, 'utf8') }], [scenario]);
  expect(run.errors).toEqual([]);
  const report = run.reports[0]?.report;
  if (!report) throw new Error(`${path}: nothing evaluated`);
  return {
    verdict: report.verdict,
    findings: report.findings.map((f) => `${f.rule} (${f.assertion})`).sort(),
    scores: report.scores,
  };
}

describe('toolpath promote', () => {
  it('writes a fixture that reproduces the made-up confirmation with no raw identifier in it', async () => {
    const source = traces['made-up-confirmation'] as string;
    const out = join(dir, 'made-up.json');
    const run = await promote([source, '--scenario', scenarioPath, '--out', out]);
    expect(run.stderr).toMatch(/written to .*made-up\.json \(fail, 2 findings reproduced\)/);
    expect(run.code).toBe(0);

    const text = await readFile(out, 'utf8');
    const read = readStoredTraces(text, out);
    expect(read.errors).toEqual([]);
    expect(read.input?.format).toBe('otlp-json');
    for (const raw of RAW_IDENTIFIERS) expect(text).not.toContain(raw);
    expect(text).toMatch(/id_[0-9a-f]{10}/);

    const before = await evaluated(source);
    expect(before.findings).toEqual([
      'answer.grounded (answer.grounded)',
      'grounding.source (grounding:send_confirmation.refundId)',
    ]);
    expect(await evaluated(out)).toEqual(before);

    const expected = JSON.parse(await readFile(join(dir, 'made-up.expected.json'), 'utf8'));
    expect(expected).toMatchObject({
      scenario: { id: 'demo.support.refund', version: '2' },
      verdict: 'fail',
      findings: [
        { rule: 'answer.grounded', severity: 'hard', assertion: 'answer.grounded' },
        { rule: 'grounding.source', severity: 'hard', assertion: 'grounding:send_confirmation.refundId' },
      ],
    });
    expect(expected.findings[1].calls).toHaveLength(2);
    for (const raw of RAW_IDENTIFIERS) expect(JSON.stringify(expected)).not.toContain(raw);
  });

  it('keeps grounding: the good trace promoted still passes, the early refund still breaks order', async () => {
    const good = join(dir, 'good.json');
    expect((await promote([traces['good-refund'] as string, '-s', scenarioPath, '-o', good])).code).toBe(0);
    const goodResult = await evaluated(good);
    expect(goodResult.verdict).toBe('pass');
    expect(goodResult.scores.grounding).toBe(1);

    const early = join(dir, 'early.json');
    expect(
      (await promote([traces['refund-before-policy'] as string, '-s', scenarioPath, '-o', early])).code,
    ).toBe(0);
    expect((await evaluated(early)).findings).toEqual(['order.before (order.before[0])']);
  });

  it('drops unrelated spans, unread attributes and resource attributes', async () => {
    const document = JSON.parse(await readFile(traces['good-refund'] as string, 'utf8'));
    const resourceSpans = document.resourceSpans[0];
    resourceSpans.resource.attributes.push({ key: 'host.name', value: { stringValue: 'billing-7' } });
    const spans = resourceSpans.scopeSpans[0].spans;
    const root = spans.find((s: { parentSpanId?: string }) => !s.parentSpanId);
    const tool = spans.find((s: { attributes: { key: string }[] }) =>
      s.attributes.some((a) => a.key === 'gen_ai.tool.call.result'),
    );
    tool.attributes.push({ key: 'http.url', value: { stringValue: 'https://shop.test/orders/O-17' } });
    spans.push({
      ...tool,
      spanId: 'abcdef0123456789',
      parentSpanId: root.spanId,
      name: 'SELECT orders',
      attributes: [{ key: 'db.statement', value: { stringValue: "SELECT * FROM orders WHERE id='O-17'" } }],
    });
    const input = join(dir, 'noisy.otlp.json');
    await writeFile(input, JSON.stringify(document));
    const out = join(dir, 'noisy.json');
    const run = await promote([input, '-s', scenarioPath, '-o', out]);
    expect(run.code).toBe(0);
    const [, written, read] = /: (\d+) of (\d+) spans written/.exec(run.stderr) ?? [];
    expect(Number(written)).toBe(Number(read) - 1);
    const text = await readFile(out, 'utf8');
    for (const gone of ['SELECT', 'db.statement', 'http.url', 'host.name', 'billing-7', 'abcdef0123456789'])
      expect(text).not.toContain(gone);
    expect(text).toContain('service.name');
    expect((await evaluated(out)).verdict).toBe('pass');
  });

  it('follows --redact: keep paths stay raw, hash paths are hashed whole', async () => {
    const config = join(dir, 'redact.yaml');
    await writeFile(config, 'keep: [email]\nhash: [currency]\n');
    const out = join(dir, 'configured.json');
    const run = await promote([
      traces['good-refund'] as string,
      '-s',
      scenarioPath,
      '-o',
      out,
      '--redact',
      config,
    ]);
    expect(run.code).toBe(0);
    const text = await readFile(out, 'utf8');
    expect(text).toContain('sam@example.test');
    expect(text).not.toContain('USD');
    expect(text).not.toContain('O-17');
    expect((await evaluated(out)).verdict).toBe('pass');
  });

  it('exits 1 and says what differs when the redacted fixture does not reproduce', async () => {
    // Results kept raw but arguments hashed: the confirmed refund id no longer matches the refund's.
    const config = join(dir, 'breaks.json');
    await writeFile(config, JSON.stringify({ keep: ['gen_ai.tool.call.result'] }));
    const out = join(dir, 'broken.json');
    const run = await promote([
      traces['good-refund'] as string,
      '-s',
      scenarioPath,
      '-o',
      out,
      '--redact',
      config,
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('does not reproduce');
    expect(run.stderr).toContain('verdict: expected pass, got fail');
    expect(run.stderr).toContain('unexpected finding grounding.source [hard]');
    // Nothing half-written: no fixture without its expectations.
    await expect(readFile(out, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a scenario that names a literal value the redaction replaces: the keep list that fixes it, and no file', async () => {
    // docs/scenarios.md's own argument match.
    const literal = join(dir, 'literal.yaml');
    await writeFile(
      literal,
      'id: literal\ntools: { required: [issue_refund] }\narguments:\n  - { tool: issue_refund, call: 1, match: { args: { orderId: O-17 } } }\n',
    );
    const out = join(dir, 'literal', 'fixture.json');
    const source = traces['good-refund'] as string;
    const run = await promote([source, '-s', literal, '-o', out]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('does not reproduce trace');
    expect(run.stderr).toContain('so nothing was written');
    expect(run.stderr).toContain(
      'the scenario names values the redaction replaces (orderId: "O-17"); keep them as they are with --redact FILE, FILE holding {"keep":["orderId"]}',
    );
    await expect(readFile(out, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    // The hint, followed: both files, and the fixture passes as the trace did.
    const keep = join(dir, 'keep.json');
    await writeFile(keep, JSON.stringify({ keep: ['orderId'] }));
    const kept = await promote([source, '-s', literal, '-o', out, '--redact', keep]);
    expect(kept.code).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 'literal', 'fixture.expected.json'), 'utf8')).verdict).toBe(
      'pass',
    );
  });

  it('needs one trace, a scenario and an output', async () => {
    await expect(promote(['-s', scenarioPath, '-o', 'x.json'])).rejects.toThrow(UsageError);
    await expect(promote(['a.json', '-o', 'x.json'])).rejects.toThrow('missing --scenario FILE');
    await expect(promote(['a.json', '-s', scenarioPath])).rejects.toThrow('missing --out');
    await expect(promote(['a.json', 'b.json', '-s', scenarioPath, '-o', 'x.json'])).rejects.toThrow(
      'exactly one TRACE',
    );
    await expect(promote(['a.json', '--bogus'])).rejects.toThrow(UsageError);
  });

  it('names the file and the problem on input errors, exit 2', async () => {
    const missing = await promote([join(dir, 'nope.json'), '-s', scenarioPath, '-o', join(dir, 'x.json')]);
    expect(missing).toEqual({
      code: 2,
      stderr: `toolpath promote: ${join(dir, 'nope.json')}: no such file: ${join(dir, 'nope.json')} (check the path and the working directory)\n`,
    });

    const unwritable = await promote([
      traces['good-refund'] as string,
      '-s',
      scenarioPath,
      '-o',
      join(scenarioPath, 'x.json'),
    ]);
    // The folder of --out is made when missing; under a file it cannot be.
    expect(unwritable).toEqual({
      code: 2,
      stderr: `toolpath promote: ${join(scenarioPath, 'x.json')}: cannot write: EEXIST\n`,
    });

    const twoTraces = new URL('../spans/sdk-genai-two-traces.otlp.json', import.meta.url).pathname;
    const many = await promote([twoTraces, '-s', scenarioPath, '-o', join(dir, 'x.json')]);
    expect(many.code).toBe(2);
    expect(many.stderr).toMatch(/holds 2 traces; choose one with --trace \([0-9a-f]{32}, [0-9a-f]{32}\)/);
    const wrongId = await promote([
      twoTraces,
      '-s',
      scenarioPath,
      '-o',
      join(dir, 'x.json'),
      '--trace',
      'ff',
    ]);
    expect(wrongId.stderr).toContain('--trace: ');
    expect(wrongId.stderr).toContain('has no trace ff');

    const badConfig = join(dir, 'bad-redact.json');
    await writeFile(badConfig, '{"keep": "email"}');
    const bad = await promote([
      traces['good-refund'] as string,
      '-s',
      scenarioPath,
      '-o',
      'x.json',
      '--redact',
      badConfig,
    ]);
    expect(bad).toEqual({
      code: 2,
      stderr: `toolpath promote: ${badConfig}: keep: expected a list of dotted paths (non-empty strings)\n`,
    });

    const other = join(dir, 'other.json');
    await writeFile(other, JSON.stringify({ ...DEMO_SCENARIO, appliesTo: { agent: 'billing-agent' } }));
    const unmatched = await promote([traces['good-refund'] as string, '-s', other, '-o', 'x.json']);
    expect(unmatched.code).toBe(2);
    expect(unmatched.stderr).toMatch(/scenario demo\.support\.refund does not apply to trace [0-9a-f]{32}/);
  });
});

describe('Redactor', () => {
  const key = new Uint8Array(32).fill(7);

  it('replaces the same identifier by the same token, and a different key gives different tokens', () => {
    const redactor = new Redactor(key);
    const token = redactor.token('R-1001');
    expect(token).toMatch(/^id_[0-9a-f]{10}$/);
    expect(redactor.text('refund R-1001 for O-17 sent to sam@example.test')).toBe(
      `refund ${token} for ${redactor.token('O-17')} sent to ${redactor.token('sam@example.test')}`,
    );
    expect(new Redactor(new Uint8Array(32).fill(8)).token('R-1001')).not.toBe(token);
  });

  it('hashes e-mails, UUIDs, prefixed ids and 4+ digit runs, and leaves words, small numbers and span ids', () => {
    const redactor = new Redactor(key);
    const text = 'call_1 9b2c7d3e-1f4a-4b5c-8d6e-7f8091a2b3c4 order 12345 qty 40 get_order ok';
    expect(redactor.text(text)).toMatch(/^id_\w{10} id_\w{10} order id_\w{10} qty 40 get_order ok$/);
    expect(redactor.text('0123456789abcdef')).toBe('0123456789abcdef');
  });

  it('walks JSON inside attributes, keeps names and models, and applies keep and hash by path suffix', () => {
    const redactor = new Redactor(key, { keep: ['note'], hash: ['customer.name'] });
    const attributes = redactor.attributes({
      'gen_ai.tool.name': 'lookup-2024',
      'gen_ai.request.model': 'gpt-4o-2024-08-06',
      'gen_ai.tool.call.arguments': JSON.stringify({ customer: { name: 'Sam', id: 'C-9' }, note: 'O-17' }),
    });
    expect(attributes['gen_ai.tool.name']).toBe('lookup-2024');
    expect(attributes['gen_ai.request.model']).toBe('gpt-4o-2024-08-06');
    expect(JSON.parse(attributes['gen_ai.tool.call.arguments'] as string)).toEqual({
      customer: { name: redactor.token('Sam'), id: redactor.token('C-9') },
      note: 'O-17',
    });
  });
});
