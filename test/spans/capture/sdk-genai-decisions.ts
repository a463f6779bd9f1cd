/**
 * Captures refund runs whose tool calls carry pre-execution decisions, from a real OpenTelemetry
 * SDK (sdk-trace-base 2.x, JsonTraceSerializer), in the OTel GenAI conventions' documented shape:
 * the event `gen_ai.tool.call.decision` with `gen_ai.tool.call.decision.outcome` (allow, deny,
 * require_approval), `gen_ai.tool.call.id` and `gen_ai.tool.name` (semantic-conventions-genai
 * PR #535). No framework that runs here records that event (the Vercel AI SDK v7 records an
 * approval only as a bare `tool-approval-request` part, see vercel-ai-approval.ts; the OpenAI
 * Agents SDK's OpenInference bridge records none), so the agent loop is a mock that records the
 * decision on its agent span before it runs (or holds) the call, as a framework's approval step would:
 *
 *   sdk-genai-decision-approved.otlp.json      require_approval, then allow: the refund runs
 *   sdk-genai-decision-unapproved.otlp.json    require_approval never answered: the refund runs anyway
 *   sdk-genai-decision-denied-ran.otlp.json    deny: the refund runs anyway
 *   sdk-genai-decision-denied-held.otlp.json   deny: the refund is held, the model is told so
 *
 * Run from the repository root: npx tsx test/spans/capture/sdk-genai-decisions.ts
 */
import { type Span, SpanKind } from '@opentelemetry/api';
import {
  type Decision,
  genAiRecorder,
  type Json,
  MODEL,
  type MockCall,
  recordDecisions,
  sleep,
} from './genai-recorder.js';

const { tracer, converse, record, shutdown } = genAiRecorder(
  'support-agent-service',
  'support-agent-framework',
  '1.4.2',
);

interface Call extends MockCall {
  /** Run the call whatever the decisions said (a gate that was passed). */
  runAnyway?: boolean;
}

const RESULTS: Record<string, Json> = {
  get_order: { order_id: 'ORD-20417', total: 89.9, currency: 'EUR', status: 'delivered' },
  issue_refund: { refund_id: 'RF-88213', order_id: 'ORD-20417', amount: 89.9, status: 'issued' },
};

/** Runs the call, or holds it when its last decision says no and it is not run anyway. */
async function executeOrHold(agent: Span, call: Call): Promise<Json> {
  await recordDecisions(agent, call);
  const last = call.decisions?.at(-1);
  if (last !== undefined && last !== 'allow' && !call.runAnyway) {
    return { type: 'tool_call_response', id: call.id, response: `not run: the ${last} decision held it` };
  }
  return tracer.startActiveSpan(`execute_tool ${call.name}`, { kind: SpanKind.INTERNAL }, async (span) => {
    const result = RESULTS[call.name] ?? null;
    span.setAttributes({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.id,
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.call.arguments': JSON.stringify(call.arguments),
      'gen_ai.tool.call.result': JSON.stringify(result),
    });
    await sleep(2);
    span.end();
    return { type: 'tool_call_response', id: call.id, response: result };
  });
}

/** One agent run: each turn's calls, then a final answer. */
async function run(turns: Call[][]): Promise<void> {
  const attributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.provider.name': 'mock',
    'gen_ai.agent.name': 'support-agent',
    'gen_ai.request.model': MODEL,
  };
  await tracer.startActiveSpan('invoke_agent support-agent', { attributes }, async (agent) => {
    await converse('Refund order ORD-20417.', turns, (call) => executeOrHold(agent, call));
    agent.end();
  });
}

const lookup: Call = { id: 'call_order', name: 'get_order', arguments: { order_id: 'ORD-20417' } };
const refund = (decisions: Decision[], runAnyway = false): Call => ({
  id: 'call_refund',
  name: 'issue_refund',
  arguments: { order_id: 'ORD-20417', amount: 89.9 },
  decisions,
  runAnyway,
});

const CASES: Record<string, Call[][]> = {
  approved: [[lookup], [refund(['require_approval', 'allow'])]],
  unapproved: [[lookup], [refund(['require_approval'], true)]],
  'denied-ran': [[lookup], [refund(['deny'], true)]],
  'denied-held': [[lookup], [refund(['deny'])]],
};

for (const [name, turns] of Object.entries(CASES))
  await record(`sdk-genai-decision-${name}.otlp.json`, () => run(turns));
await shutdown();
