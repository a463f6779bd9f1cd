/**
 * Captures multi-agent runs in the OTel GenAI conventions' shape from a real OpenTelemetry SDK
 * (sdk-trace-base 2.x, JsonTraceSerializer): a triage agent and a billing agent, each an
 * `invoke_agent` span with its `chat` and `execute_tool` spans, driven by a scripted mock model.
 * Handoffs use the transfer refinement of `execute_tool` (`gen_ai.transfer.mode`,
 * `.target.name`, `.target.type`; semantic-conventions-genai PR #535):
 *
 *   sdk-genai-agents-transfer.otlp.json        triage transfers to billing (pass_control), billing's
 *                                               run follows under the workflow and refunds
 *   sdk-genai-agents-sub-agent.otlp.json       triage calls billing as a tool (return_to_caller):
 *                                               billing's run (a lookup, the refund) nests inside
 *                                               the call's span
 *   sdk-genai-agents-triage-refunds.otlp.json  triage refunds itself, no handoff
 *   sdk-genai-agents-transfer-not-made.otlp.json  triage transfers to billing and tells the
 *                                               customer so; no billing run follows
 *
 * Run from the repository root: npx tsx test/spans/capture/sdk-genai-agents.ts
 */
import { type Attributes, SpanKind } from '@opentelemetry/api';
import { genAiRecorder, type Json, MODEL, sleep } from './genai-recorder.js';

const { tracer, chat, record, shutdown } = genAiRecorder(
  'support-agents-service',
  'support-agent-framework',
  '2.0.0',
);

/** One tool call a turn asks for; `run` is what it does (a sub-agent's run, a transfer). */
interface Call {
  id: string;
  name: string;
  arguments: { [key: string]: Json };
  transfer?: { target: string; mode: 'pass_control' | 'return_to_caller' };
  /** The agent run inside the call (agent as a tool). */
  subAgent?: Agent;
}

interface Agent {
  name: string;
  /** Each turn's calls; the run then answers `answer`. */
  turns: Call[][];
  answer: string;
}

const RESULTS: Record<string, Json> = {
  get_order: { order_id: 'ORD-20417', total: 89.9, status: 'delivered' },
  issue_refund: { refund_id: 'RF-88213', order_id: 'ORD-20417', amount: 89.9, status: 'issued' },
};

async function execute(call: Call): Promise<Json> {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': call.name,
    'gen_ai.tool.call.id': call.id,
    'gen_ai.tool.type': 'function',
    'gen_ai.tool.call.arguments': JSON.stringify(call.arguments),
  };
  if (call.transfer) {
    attributes['gen_ai.transfer.mode'] = call.transfer.mode;
    attributes['gen_ai.transfer.target.name'] = call.transfer.target;
    attributes['gen_ai.transfer.target.type'] = 'agent';
  }
  const name = call.transfer
    ? `execute_tool ${call.name} ${call.transfer.target}`
    : `execute_tool ${call.name}`;
  return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
    const result: Json = call.subAgent
      ? await runAgent(call.subAgent, String(call.arguments.request))
      : call.transfer
        ? { transferred_to: call.transfer.target }
        : (RESULTS[call.name] ?? null);
    span.setAttribute('gen_ai.tool.call.result', JSON.stringify(result));
    await sleep(1);
    span.end();
    return result;
  });
}

/** One agent run: an `invoke_agent` span, its turns and their calls; returns its answer. */
async function runAgent(agent: Agent, request: string): Promise<string> {
  const attributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.provider.name': 'mock',
    'gen_ai.agent.name': agent.name,
    'gen_ai.request.model': MODEL,
  };
  return tracer.startActiveSpan(`invoke_agent ${agent.name}`, { attributes }, async (span) => {
    const messages: Json[] = [{ role: 'user', parts: [{ type: 'text', content: request }] }];
    for (const calls of agent.turns) {
      const parts = calls.map((call) => ({
        type: 'tool_call',
        id: call.id,
        name: call.name,
        arguments: call.arguments,
      }));
      messages.push(await chat(messages, parts, 'tool_call', true));
      const results: Json[] = [];
      for (const call of calls)
        results.push({ type: 'tool_call_response', id: call.id, response: await execute(call) });
      messages.push({ role: 'tool', parts: results });
    }
    messages.push(await chat(messages, [{ type: 'text', content: agent.answer }], 'stop', true));
    span.end();
    return agent.answer;
  });
}

/** The workflow: the first agent, then each agent control was passed to. */
async function workflow(first: Agent, passedTo: Agent[] = []): Promise<void> {
  await tracer.startActiveSpan('invoke_workflow support', async (span) => {
    span.setAttribute('gen_ai.operation.name', 'invoke_workflow');
    await runAgent(first, 'Refund order ORD-20417, it arrived broken.');
    for (const agent of passedTo) await runAgent(agent, 'Refund order ORD-20417, it arrived broken.');
    span.end();
  });
}

const lookup: Call = { id: 'call_order', name: 'get_order', arguments: { order_id: 'ORD-20417' } };
const refund: Call = {
  id: 'call_refund',
  name: 'issue_refund',
  arguments: { order_id: 'ORD-20417', amount: 89.9 },
};
const billing: Agent = { name: 'billing', turns: [[refund]], answer: 'Refund RF-88213 issued.' };
const transfer: Call = {
  id: 'call_transfer',
  name: 'transfer_to_billing',
  arguments: {},
  transfer: { target: 'billing', mode: 'pass_control' },
};
const handsOff: Agent = { name: 'triage', turns: [[transfer]], answer: 'Transferring you to billing.' };

const CASES: Record<string, () => Promise<void>> = {
  transfer: () => workflow(handsOff, [billing]),
  'sub-agent': () =>
    workflow({
      name: 'triage',
      turns: [
        [
          {
            id: 'call_billing',
            name: 'billing',
            arguments: { request: 'Refund order ORD-20417 in full.' },
            transfer: { target: 'billing', mode: 'return_to_caller' },
            subAgent: { ...billing, turns: [[lookup], [refund]] },
          },
        ],
      ],
      answer: 'Billing has refunded you: RF-88213.',
    }),
  'triage-refunds': () =>
    workflow({ name: 'triage', turns: [[lookup], [refund]], answer: 'Refund RF-88213 issued.' }),
  'transfer-not-made': () => workflow(handsOff),
};

for (const [name, run] of Object.entries(CASES))
  await record(`sdk-genai-agents-${name}.otlp.json`, () => run());
await shutdown();
