import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/io.js';
import { VIEW_USAGE, viewCommand } from '../../src/cli/view-command.js';
import { captureDemoTraces } from '../../src/demo/capture.js';
import { DEMO_SCENARIO } from '../../src/demo/conversations.js';
import { captureIO } from '../helpers/cli.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

let dir: string;
let scenario: string;
let bad: string;
let good: string;

/** A tool argument that would open an element and run script if it were not escaped. */
const INJECTION = '</script><img src=x onerror="alert(1)">';

async function view(args: string[]) {
  const { io, output } = captureIO();
  const code = await viewCommand(args, io);
  return { code, ...output };
}

beforeAll(async () => {
  dir = temporaryDir('toolpath-view-test-');
  scenario = join(dir, 'scenario.json');
  await writeFile(scenario, JSON.stringify(DEMO_SCENARIO));
  for (const trace of await captureDemoTraces()) {
    await writeFile(join(dir, `${trace.conversation.name}.otlp.json`), trace.otlpJson);
  }
  bad = join(dir, 'refund-before-policy.otlp.json');
  good = join(dir, 'good-refund.otlp.json');
});

describe('toolpath view', () => {
  it('writes the page beside the input by default and says where', async () => {
    const run = await view([good]);
    expect(run.code).toBe(0);
    const out = join(dir, 'good-refund.otlp.html');
    expect(run.stdout).toMatch(/^toolpath view: trace [0-9a-f]{32} \(4 calls\) written to /);
    expect(run.stdout).toContain(out);
    const html = await readFile(out, 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toContain('class="findings-panel"');
  });

  it("shows the agent's final answer, as its last generation's output says it, escaped", async () => {
    const out = join(dir, 'answer.html');
    expect((await view([good, '--out', out])).code).toBe(0);
    const html = await readFile(out, 'utf8');
    // The answer as the trace records it: the text part of the last chat span's output messages.
    const request = JSON.parse(await readFile(good, 'utf8')) as {
      resourceSpans: {
        scopeSpans: {
          spans: { name: string; attributes: { key: string; value: { stringValue?: string } }[] }[];
        }[];
      }[];
    };
    const chats = request.resourceSpans
      .flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans))
      .filter((span) => span.name.startsWith('chat'));
    const output = chats.at(-1)?.attributes.find((a) => a.key === 'gen_ai.output.messages')
      ?.value.stringValue;
    const text = (
      JSON.parse(output ?? '[]') as { parts: { type: string; content: string }[] }[]
    )[0]?.parts.find((part) => part.type === 'text')?.content;
    expect(text).toBeTruthy();
    const escaped = (text as string).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
    expect(html).toContain(`<section class="answer"><h2>Final answer</h2><p>${escaped}</p></section>`);
  });

  it("shows a Vercel AI SDK agent's final answer, the text its last model call recorded, escaped", async () => {
    const input = fileURLToPath(new URL('../spans/vercel-ai-v6-tool-error.otlp.json', import.meta.url));
    const out = join(dir, 'vercel-answer.html');
    expect((await view([input, '--out', out])).code).toBe(0);
    const html = await readFile(out, 'utf8');
    // The text as the trace records it: `ai.response.text` of the model call (doGenerate) that wrote one.
    const request = JSON.parse(await readFile(input, 'utf8')) as {
      resourceSpans: {
        scopeSpans: {
          spans: { name: string; attributes: { key: string; value: { stringValue?: string } }[] }[];
        }[];
      }[];
    };
    const written = request.resourceSpans
      .flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans))
      .filter((span) => span.name === 'ai.generateText.doGenerate')
      .map((span) => span.attributes.find((a) => a.key === 'ai.response.text')?.value.stringValue)
      .filter((text) => text);
    expect(written).toHaveLength(1);
    const text = written[0] as string;
    // Quotes in it: the page must escape them.
    expect(text).toContain('"');
    const escaped = text
      .replaceAll('&', '&amp;')
      .replaceAll('<', '&lt;')
      .replaceAll('>', '&gt;')
      .replaceAll('"', '&quot;')
      .replaceAll("'", '&#39;');
    expect(html).toContain(`<section class="answer"><h2>Final answer</h2><p>${escaped}</p></section>`);
  });

  it('draws every call with its id, tool and outcome, one row per turn', async () => {
    const out = join(dir, 'bad.html');
    expect((await view([bad, '--out', out])).code).toBe(0);
    const html = await readFile(out, 'utf8');
    const nodes = [
      ...html.matchAll(
        /<button type="button" class="call (\w+)[^"]*" data-call-id="([^"]+)"[^>]*><span class="tool">([^<]+)</g,
      ),
    ];
    expect(nodes.map((node) => [node[2], node[3], node[1]])).toEqual([
      ['call_1', 'get_order', 'ok'],
      ['call_2', 'issue_refund', 'ok'],
      ['call_3', 'get_refund_policy', 'ok'],
      ['call_4', 'send_confirmation', 'ok'],
    ]);
    // Four turns issue one call each, then the answer: five rows, four edges between them.
    expect(html.match(/<div class="turn" /g)).toHaveLength(5);
    expect(html.match(/<div class="edge"/g)).toHaveLength(4);
    expect(html).toContain('agent <strong>support-agent</strong>');
  });

  it('names turns in findings as the graph does, and shows the dimension scores', async () => {
    const together = join(dir, 'together.json');
    await writeFile(
      together,
      JSON.stringify({ id: 'together', order: { together: [['get_order', 'get_refund_policy']] } }),
    );
    const out = join(dir, 'together.html');
    expect((await view([bad, '-s', together, '-o', out])).code).toBe(0);
    const html = await readFile(out, 'utf8');
    // The graph numbers the turns; the finding says which one, not its internal id.
    expect(html).toContain('was asked for in turn 1 without get_refund_policy');
    const panel = html.slice(
      html.indexOf('<section class="findings-panel">'),
      html.indexOf('<section class="details-panel">'),
    );
    expect(panel).not.toMatch(/in turn turn|turn:[0-9a-f]{8}/);
    expect(html).toMatch(/<h2>Scores<\/h2><p class="scores"><span class="muted">together<\/span> order 0</);
  });

  it('with --scenario lists the findings and highlights the calls they name', async () => {
    const out = join(dir, 'bad-judged.html');
    const run = await view([bad, '-s', scenario, '-o', out]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('1 evaluation, 1 finding');
    const html = await readFile(out, 'utf8');
    expect(html).toContain('FAIL demo.support.refund@2');
    const finding =
      /<button type="button" class="finding hard" data-calls="([^"]+)"><span class="rule">([^<]+)</.exec(
        html,
      );
    expect(finding?.[2]).toBe('order.before[0]');
    // The early refund and the policy lookup it should have waited for.
    expect(finding?.[1]).toBe('call_2 call_3');
    for (const id of ['call_2', 'call_3'])
      expect(html).toMatch(
        new RegExp(`class="call ok flagged" data-call-id="${id}"[^>]*>.*?<span class="marker"`),
      );
    expect(html.match(/class="call \w+ flagged"/g)).toHaveLength(2);
  });

  it('a passing trace gets an empty findings list, not a missing one', async () => {
    const out = join(dir, 'good-judged.html');
    expect((await view([good, '-s', scenario, '-o', out])).code).toBe(0);
    const html = await readFile(out, 'utf8');
    expect(html).toContain('PASS demo.support.refund@2');
    expect(html).toContain('No findings.');
  });

  it('escapes every value: an argument cannot inject markup or close the script', async () => {
    const input = join(dir, 'hostile.json');
    await writeFile(
      input,
      JSON.stringify([
        { kind: 'call', id: 'c"1', tool: '<b>get_order</b>', args: { note: INJECTION } },
        { kind: 'result', callId: 'c"1', ok: false, output: { error: `'${INJECTION}` } },
      ]),
    );
    const out = join(dir, 'hostile.html');
    expect((await view([input, '--out', out])).code).toBe(0);
    const html = await readFile(out, 'utf8');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>');
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html).toContain('data-call-id="c&quot;1"');
    expect(html).toContain('&lt;/script&gt;&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(html).toContain('\\u003c/script\\u003e\\u003cimg');
    expect(html).toContain('class="call error"');
  });

  it('--trace picks a trace by id and names the ones there are when it is not found', async () => {
    const file = join(dir, 'two.json');
    const a = JSON.parse(await readFile(good, 'utf8'));
    const b = JSON.parse(await readFile(bad, 'utf8'));
    await writeFile(file, JSON.stringify([a, b]));
    const secondId = b.resourceSpans[0].scopeSpans[0].spans[0].traceId as string;
    const run = await view([file, '--trace', secondId, '-o', join(dir, 'two.html')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`trace ${secondId} `);
    const missing = await view([file, '--trace', 'nope']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^toolpath view: .*two\.json: no trace "nope"; the file holds [0-9a-f]{32}, [0-9a-f]{32}\n$/,
    );
  });

  it('exits 2 naming the file on input errors', async () => {
    const missing = await view([join(dir, 'absent.json')]);
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toMatch(/no such file: \/\S*absent\.json \(check the path/);

    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{"resourceSpans": [');
    const notJson = await view([broken]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/broken\.json: not valid JSON/);

    const badScenario = join(dir, 'bad-scenario.json');
    await writeFile(badScenario, JSON.stringify({ id: 'x', tools: { allowed: 'nope' } }));
    const scenarioRun = await view([good, '-s', badScenario]);
    expect(scenarioRun.code).toBe(2);
    expect(scenarioRun.stderr).toContain('bad-scenario.json');
  });

  it('usage mistakes are UsageErrors (printed with the usage, exit 2, by main)', async () => {
    await expect(view([])).rejects.toThrow(new UsageError('missing TRACE: give one stored trace file'));
    // Two inputs make a run page (view-run tests); --trace then has nothing to pick from.
    await expect(view([good, bad, '--trace', 'abc'])).rejects.toThrow(/--trace picks a trace of one TRACE/);
    await expect(view(['-'])).rejects.toThrow(UsageError);
    await expect(view([good, '--format', 'json'])).rejects.toThrow(/--format/);
    expect(VIEW_USAGE).toMatch(/^usage: toolpath view TRACE/);
  });
});
