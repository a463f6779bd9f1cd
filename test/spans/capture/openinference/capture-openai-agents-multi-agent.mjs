// Captures OpenInference spans of multi-agent @openai/agents (JS) runs through
// @arizeai/openinference-instrumentation-openai-agents, fully offline: a
// triage agent and a billing agent, each on its own scripted Model (a
// hand-written `Model`, getResponse wrapped in withGenerationSpan, as
// capture-openai-agents.mjs's "custom" set-up).
//
//  - openinference-openai-agents-handoff-to-billing.otlp.json: triage hands off
//    to billing (the SDK's handoff: `transfer_to_billing`), billing issues the
//    refund.
//  - openinference-openai-agents-triage-refunds.otlp.json: triage issues the
//    refund itself (it has the tool too) and never hands off.
//  - openinference-openai-agents-handoff-ignored.otlp.json: triage asks for
//    two handoffs in one response (billing, then sales); the SDK takes the
//    first and answers the second "Multiple handoffs detected, ignoring this
//    one.": sales never runs.
//  - openinference-openai-agents-agent-as-tool.otlp.json: triage calls billing
//    as a tool (`billing.asTool()`): billing's run, which looks the order up
//    and refunds, nests inside the call.
//
// Run from the repository root (the root's devDependencies hold the pinned
// packages of ./package.json): node test/spans/capture/openinference/capture-openai-agents-multi-agent.mjs

import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import * as agents from '@openai/agents';
import { Agent, Runner, setTracingDisabled, tool, Usage, withGenerationSpan } from '@openai/agents';
import { z } from 'zod';
import { setupOtel, writeFixture } from './lib/otel.mjs';

// agents-core turns tracing off by default when NODE_ENV=test.
delete process.env.NODE_ENV;
delete process.env.OPENAI_AGENTS_DISABLE_TRACING;
delete process.env.OPENAI_API_KEY;

const otel = setupOtel();
const instrumentation = new OpenAIAgentsInstrumentation({ tracerProvider: otel.provider });
instrumentation.manuallyInstrument(agents);
setTracingDisabled(false);

const USER_PROMPT = 'My kettle from order A-1001 arrived broken. Please refund me.';

const getOrder = () =>
  tool({
    name: 'get_order',
    description: 'Look up an order by id.',
    parameters: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => JSON.stringify({ order_id, status: 'delivered', total: 49.99 }),
  });
const issueRefund = () =>
  tool({
    name: 'issue_refund',
    description: 'Issue a refund for an order.',
    parameters: z.object({ order_id: z.string(), amount: z.number() }),
    execute: async ({ order_id, amount }) =>
      JSON.stringify({ refund_id: 'R-7788', order_id, amount, status: 'issued' }),
  });

const call = (id, name, args) => ({ id, name, args });
const LOOKUP = call('call_get_order_1', 'get_order', { order_id: 'A-1001' });
const REFUND = call('call_issue_refund_1', 'issue_refund', { order_id: 'A-1001', amount: 49.99 });
const DONE = { text: 'Your refund R-7788 of 49.99 EUR has been issued.' };

/** A scripted Model: each getResponse answers the next turn of the script, in a generation span. */
class ScriptedModel {
  constructor(name, script) {
    this.name = name;
    this.script = script;
    this.turn = 0;
  }

  async getResponse(request) {
    const index = this.turn++;
    const turn = this.script[index];
    if (!turn) throw new Error(`${this.name}: script exhausted at turn ${index}`);
    return withGenerationSpan(async (span) => {
      span.spanData.model = `scripted-${this.name}`;
      const inputItems =
        typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
      span.spanData.input = [
        ...(request.systemInstructions ? [{ role: 'system', content: request.systemInstructions }] : []),
        ...inputItems,
      ];
      const output = turn.calls
        ? turn.calls.map((c) => ({
            type: 'function_call',
            id: `fc_${this.name}_${index}_${c.id}`,
            callId: c.id,
            name: c.name,
            arguments: JSON.stringify(c.args),
            status: 'completed',
          }))
        : [
            {
              type: 'message',
              id: `msg_${this.name}_${index}`,
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: turn.text }],
            },
          ];
      span.spanData.output = output;
      span.spanData.usage = { input_tokens: 80 + index * 30, output_tokens: 15 + index };
      return {
        usage: new Usage({ requests: 1, inputTokens: 80 + index * 30, outputTokens: 15 + index }),
        output,
        responseId: `resp_${this.name}_${index}`,
      };
    });
  }

  getStreamedResponse() {
    throw new Error('the captures run non-streamed');
  }
}

async function capture(fileName, workflowName, agent, { check } = {}) {
  const runner = new Runner({ workflowName });
  const result = await runner.run(agent, USER_PROMPT, { maxTurns: 10 });
  console.log(
    `${fileName}: last agent ${result.lastAgent?.name}, output ${JSON.stringify(result.finalOutput)}`,
  );
  if (!result.finalOutput) throw new Error(`${fileName}: run produced no final output`);
  check?.(result);
  // Trace end is reported through an async processor callback; let it settle.
  await new Promise((r) => setTimeout(r, 50));
  await writeFixture(otel, fileName, { expectSpans: 5 });
}

const billingAgent = (script) =>
  new Agent({
    name: 'billing',
    instructions: 'You handle refunds.',
    model: new ScriptedModel('billing', script),
    tools: [getOrder(), issueRefund()],
  });
const lastAgentIs = (name) => (result) => {
  if (result.lastAgent?.name !== name) throw new Error(`expected ${name} to answer`);
};

{
  const billing = billingAgent([{ calls: [REFUND] }, DONE]);
  const triage = new Agent({
    name: 'triage',
    instructions: 'Route the customer to the right agent.',
    model: new ScriptedModel('triage', [{ calls: [call('call_transfer_1', 'transfer_to_billing', {})] }]),
    handoffs: [billing],
  });
  await capture('openinference-openai-agents-handoff-to-billing.otlp.json', 'support (handoff)', triage, {
    check: lastAgentIs('billing'),
  });
}

{
  const billing = billingAgent([DONE]);
  const triage = new Agent({
    name: 'triage',
    instructions: 'Route the customer to the right agent.',
    model: new ScriptedModel('triage', [{ calls: [LOOKUP] }, { calls: [REFUND] }, DONE]),
    tools: [getOrder(), issueRefund()],
    handoffs: [billing],
  });
  await capture('openinference-openai-agents-triage-refunds.otlp.json', 'support (triage refunds)', triage, {
    check: lastAgentIs('triage'),
  });
}

{
  const billing = billingAgent([{ calls: [REFUND] }, DONE]);
  const sales = new Agent({
    name: 'sales',
    instructions: 'You sell.',
    model: new ScriptedModel('sales', [{ text: 'never asked' }]),
  });
  const triage = new Agent({
    name: 'triage',
    instructions: 'Route the customer to the right agent.',
    model: new ScriptedModel('triage', [
      {
        calls: [
          call('call_transfer_1', 'transfer_to_billing', {}),
          call('call_transfer_2', 'transfer_to_sales', {}),
        ],
      },
    ]),
    handoffs: [billing, sales],
  });
  await capture('openinference-openai-agents-handoff-ignored.otlp.json', 'support (two handoffs)', triage, {
    check: lastAgentIs('billing'),
  });
}

{
  const billing = billingAgent([{ calls: [LOOKUP] }, { calls: [REFUND] }, DONE]);
  const triage = new Agent({
    name: 'triage',
    instructions: 'Ask billing for refunds.',
    model: new ScriptedModel('triage', [
      { calls: [call('call_billing_1', 'billing', { input: 'Refund order A-1001, 49.99.' })] },
      DONE,
    ]),
    tools: [billing.asTool({ toolName: 'billing', toolDescription: 'The billing agent.' })],
  });
  await capture('openinference-openai-agents-agent-as-tool.otlp.json', 'support (agent as tool)', triage, {
    check: lastAgentIs('triage'),
  });
}

instrumentation.disable?.();
