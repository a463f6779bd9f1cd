/**
 * `toolpath demo`: runs the instrumented demo agent through three conversations, writes their
 * traces and the scenario to a folder, and evaluates them exactly as `toolpath eval` would.
 * Exits 0 when every verdict is the one the demo expects (the demo checks itself).
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEMO_SCENARIO, EXPECTED_VERDICTS } from '../demo/conversations.js';
import { parseScenario } from '../scenario/scenario.js';
import { formatPretty } from './format-pretty.js';
import { type CliIO, parseCommandLine, UsageError } from './io.js';
import { runEval } from './run-eval.js';

/** Runs `toolpath demo [--keep DIR]`; resolves to the exit code. */
export async function demoCommand(args: readonly string[], io: CliIO): Promise<number> {
  let dir: string;
  try {
    const { values } = parseCommandLine({
      args: [...args],
      options: { keep: { type: 'string' } },
      strict: true,
    });
    dir = values.keep ?? (await mkdtemp(join(tmpdir(), 'toolpath-demo-')));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  await mkdir(dir, { recursive: true });

  // Loaded here, not with the CLI: it needs the OTel SDK peers, which `init` and `eval` do not.
  const { captureDemoTraces } = await import('../demo/capture.js');
  const traces = await captureDemoTraces();
  const scenarioPath = join(dir, 'refund-scenario.json');
  await writeFile(scenarioPath, `${JSON.stringify(DEMO_SCENARIO, null, 2)}\n`);
  const inputs = [];
  for (const { conversation, otlpJson } of traces) {
    const path = join(dir, `${conversation.name}.otlp.json`);
    await writeFile(path, otlpJson);
    inputs.push({ source: path, text: otlpJson });
  }

  io.stdout(
    'toolpath demo: a support agent (scripted mock model, OTel GenAI spans) handled three refund requests:\n',
  );
  for (const { conversation, traceId } of traces)
    io.stdout(`  ${conversation.name.padEnd(22)} ${traceId}  ${conversation.description}\n`);
  io.stdout(`\nEvaluating against scenario ${DEMO_SCENARIO.id}:\n\n`);

  const run = runEval(inputs, [parseScenario(DEMO_SCENARIO, scenarioPath)]);
  io.stdout(formatPretty(run, { color: io.isTTY }));

  const shown = resolve(dir);
  io.stdout(
    `\nThe traces and the scenario are in ${shown}. Evaluate them yourself:\n  ${invocation()} eval --scenario ${join(shown, 'refund-scenario.json')} ${join(shown, '*.otlp.json')}\n`,
  );

  const unexpected = traces.filter(({ conversation, traceId }) => {
    const report = run.reports.find((r) => r.report.traceId === traceId)?.report;
    return report?.verdict !== EXPECTED_VERDICTS[conversation.name];
  });
  for (const { conversation } of unexpected)
    io.stderr(`toolpath demo: ${conversation.name} did not get the expected verdict\n`);
  return unexpected.length === 0 && run.errors.length === 0 ? 0 : 1;
}

/**
 * How to run toolpath again from where the demo ran: in its own checkout (`npm run demo`) the
 * package's script, since `npx toolpath` there would look for it in the registry; else npx.
 */
function invocation(): string {
  return process.env.npm_lifecycle_event === 'demo' ? 'npm run --silent toolpath --' : 'npx toolpath';
}
