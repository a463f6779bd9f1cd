/**
 * The files `toolpath init` writes: a commented starter scenario in the native format and a
 * vitest test that judges an agent run against it. The test calls a small stand-in agent, so it
 * passes as generated; its comments say where the real agent goes.
 */

/** Where the starter scenario goes, relative to the project directory. */
export const SCENARIO_PATH = 'toolpath/scenario.yaml';
/** Where the scenario's JSON Schema goes (next to the scenario, as its first line says). */
export const SCHEMA_PATH = 'toolpath/scenario.schema.json';
/** Where the starter test goes. */
export const TEST_PATH = 'test/toolpath.test.ts';
/** Where the processor wiring goes. */
export const TRACING_PATH = 'toolpath/tracing.ts';

/**
 * The starter scenario. Its rules fit the stand-in agent of {@link STARTER_TEST} (a support agent
 * that refunds an order), so the generated test passes; each rule says what to change.
 */
export const STARTER_SCENARIO = `# yaml-language-server: $schema=./scenario.schema.json
#
# A toolpath scenario: what a good trajectory of your agent looks like. Every section is
# optional; an omitted one checks nothing. Rules are hard (they fail the verdict) except
# efficiency, which only lowers its score. Reference: the README, "A first check on your own
# agent"; every key, with examples: docs/scenarios.md; \`npx toolpath schema\` prints the schema.
# These rules describe the stand-in support agent of test/toolpath.test.ts: rename the tools
# to yours.

id: my-agent.refund
version: 1
description: Refund an order after checking it and the refund policy, then confirm it.

# Which traces this scenario judges. Commented out: every trace.
# appliesTo:
#   agent: support-agent            # the root agent's name (gen_ai.agent.name)
#   attributes: { deployment.environment: production }

tools:
  # Deny by default: a call to any other tool fails the verdict.
  allowed: [get_order, get_refund_policy, issue_refund, send_confirmation]
  # Each must be called at least once.
  required: [issue_refund, send_confirmation]

order:
  # Causal order (what the model had seen when it asked), not start times.
  before:
    - { before: get_order, after: issue_refund }
    - { before: get_refund_policy, after: issue_refund }
  # Nothing may be called after these.
  terminal: [send_confirmation]

# An argument must come from an earlier successful result, not from the model's imagination.
grounding:
  - { tool: send_confirmation, path: refundId, from: { tool: issue_refund, path: refundId } }

# Warnings: they lower the efficiency score without failing the verdict.
efficiency:
  maxCalls: 8
  repeats: { max: 0 } # identical calls (same tool, same arguments)
`;

/**
 * The starter test. It imports only `toolpath/vitest`, `vitest` and `@opentelemetry/api`, and
 * calls `runAgent`, a stand-in that emits OTel GenAI spans, in place of the user's agent.
 */
export const STARTER_TEST = `/**
 * Judges one run of the agent against toolpath/scenario.yaml.
 * Run it: npx vitest run test/toolpath.test.ts
 */
import { type Tracer, trace } from '@opentelemetry/api';
import { expect, test } from 'vitest';
import { captureSpans, installToolpathMatchers } from 'toolpath/vitest';

installToolpathMatchers();

test('the agent refunds the order the way toolpath/scenario.yaml says', async () => {
  // captureSpans runs the function under an in-memory OTel provider (the global one while it
  // runs) and reads the spans it ended into trajectories, one per trace.
  // >>> REPLACE runAgent(...) WITH A CALL TO YOUR AGENT <<<
  const { result, trajectories } = await captureSpans(() => runAgent('Please refund order O-17.'));

  expect(result).toBeTruthy();
  expect(trajectories).toHaveLength(1);
  // The path is read from the working directory: vitest runs in the project root.
  expect(trajectories[0]).toPassScenario('toolpath/scenario.yaml');
});

// ---------------------------------------------------------------------------------------------
// STAND-IN AGENT: delete everything below once the test calls your agent.
// It is not a model: a fixed script that emits the spans an instrumented agent emits (OpenTelemetry
// GenAI conventions: invoke_agent, then a chat span per model request, an execute_tool span per
// tool call), so this test passes as generated. Your agent needs OTel instrumentation of its own
// (your framework's, or spans like these) sending to the global tracer provider.
// ---------------------------------------------------------------------------------------------

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, Json>;
}

const standInTools: Record<string, (args: Record<string, Json>) => Record<string, Json>> = {
  get_order: ({ orderId }) => ({ orderId: String(orderId), amount: 40, email: 'sam@example.test' }),
  get_refund_policy: ({ orderId }) => ({ orderId: String(orderId), eligible: true }),
  issue_refund: ({ orderId, amount }) => ({ refundId: 'R-1001', orderId: String(orderId), amount: amount ?? null }),
  send_confirmation: () => ({ delivered: true }),
};

async function runAgent(request: string): Promise<string> {
  const tracer = trace.getTracer('stand-in-agent');
  const agent = 'support-agent';
  return tracer.startActiveSpan(
    \`invoke_agent \${agent}\`,
    { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agent } },
    async (span) => {
      try {
        const messages: Json[] = [{ role: 'user', parts: [{ type: 'text', content: request }] }];
        const [order] = await step(tracer, messages, [
          { id: 'call_1', name: 'get_order', arguments: { orderId: 'O-17' } },
          { id: 'call_2', name: 'get_refund_policy', arguments: { orderId: 'O-17' } },
        ]);
        const [refund] = await step(tracer, messages, [
          { id: 'call_3', name: 'issue_refund', arguments: { orderId: 'O-17', amount: order?.amount ?? null } },
        ]);
        await step(tracer, messages, [
          {
            id: 'call_4',
            name: 'send_confirmation',
            arguments: { email: order?.email ?? null, refundId: refund?.refundId ?? null },
          },
        ]);
        const answer = 'Your refund is on its way.';
        chat(tracer, messages, [{ type: 'text', content: answer }]);
        return answer;
      } finally {
        span.end();
      }
    },
  );
}

/** One model turn asking for these calls (run in parallel), then the calls and their results. */
async function step(tracer: Tracer, messages: Json[], calls: ToolCall[]): Promise<Record<string, Json>[]> {
  chat(tracer, messages, calls.map((call) => ({ type: 'tool_call', ...call })));
  const results = await Promise.all(calls.map((call) => executeTool(tracer, call)));
  messages.push({
    role: 'tool',
    parts: calls.map((call, i) => ({ type: 'tool_call_response', id: call.id, response: results[i] ?? null })),
  });
  return results;
}

function chat(tracer: Tracer, messages: Json[], reply: Json[]): void {
  const span = tracer.startSpan('chat stand-in-model', {
    attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': JSON.stringify(messages) },
  });
  const output = { role: 'assistant', parts: reply };
  span.setAttribute('gen_ai.output.messages', JSON.stringify([output]));
  span.end();
  messages.push(output);
}

async function executeTool(tracer: Tracer, call: ToolCall): Promise<Record<string, Json>> {
  const span = tracer.startSpan(\`execute_tool \${call.name}\`, {
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.id,
      'gen_ai.tool.call.arguments': JSON.stringify(call.arguments),
    },
  });
  const result = standInTools[call.name]?.(call.arguments) ?? { error: \`unknown tool \${call.name}\` };
  span.setAttribute('gen_ai.tool.call.result', JSON.stringify(result));
  span.end();
  return result;
}
`;

/**
 * The processor wiring: an OpenTelemetry tracer provider whose exporting processor toolpath
 * wraps, judging live agent traces against the starter scenario. Imports only packages a
 * traced Node app has, plus `toolpath`.
 */
export const TRACING = `/**
 * OpenTelemetry for this app, with toolpath judging every agent trace as it completes.
 * Import it first in your entry point:  import './toolpath/tracing.js';
 *
 * Findings land in your tracing backend: a gen_ai.evaluation.result event per scenario on the
 * agent span (or on a toolpath.evaluate child span), a toolpath.finding event per finding.
 * Needs: npm i toolpath @opentelemetry/api @opentelemetry/sdk-trace-node @opentelemetry/sdk-trace-base
 *        @opentelemetry/exporter-trace-otlp-http
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { trajectoryProcessor } from 'toolpath';

export const provider = new NodeTracerProvider({
  spanProcessors: [
    trajectoryProcessor({
      // Relative to the directory the app is started from (the project root).
      scenarios: ['toolpath/scenario.yaml'],
      // What toolpath wraps: kept spans (and its findings) go on to your OTLP endpoint
      // (OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318).
      export: new BatchSpanProcessor(new OTLPTraceExporter()),
      // Optional: keep every risky trace (a hard finding, an error, an irreversible tool) and
      // 10% of the rest. Without it every trace is kept.
      // sampling: { ratio: 0.1 },
      onReport: (report) => {
        if (report.verdict !== 'pass') console.warn(\`toolpath: \${report.scenario.id} \${report.verdict} in trace \${report.traceId}\`);
      },
    }),
  ],
});
provider.register();
`;
