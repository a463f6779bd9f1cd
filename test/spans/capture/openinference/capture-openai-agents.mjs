// Captures OpenInference spans from @openai/agents (JS) through
// @arizeai/openinference-instrumentation-openai-agents, fully offline.
//
// Three model set-ups, all scripted (no network, no API key):
//  - "custom": a hand-written Model object (getResponse / getStreamedResponse)
//    that wraps each call in withGenerationSpan, the way third-party model
//    providers do. -> openinference-openai-agents-refund.otlp.json and
//    openinference-openai-agents-tool-error.otlp.json
//  - "responses": the SDK's real OpenAIResponsesModel on an OpenAI client whose
//    `fetch` is an in-process fake (the SDK's default production path; gives a
//    `response` span). -> openinference-openai-agents-responses-refund.otlp.json
//  - "chat": the SDK's real OpenAIChatCompletionsModel on the same kind of fake
//    client (gives a `generation` span with raw ChatCompletion output).
//    -> openinference-openai-agents-chatcompletions-refund.otlp.json

import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import * as agents from '@openai/agents';
import {
  Agent,
  OpenAIChatCompletionsModel,
  OpenAIResponsesModel,
  Runner,
  setTracingDisabled,
  tool,
  Usage,
  withGenerationSpan,
} from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { setupOtel, writeFixture } from './lib/otel.mjs';
import { INSTRUCTIONS, REFUND_SCRIPT, TOOL_ERROR_SCRIPT, USER_PROMPT } from './lib/script.mjs';

// agents-core turns tracing off by default when NODE_ENV=test.
delete process.env.NODE_ENV;
delete process.env.OPENAI_AGENTS_DISABLE_TRACING;
delete process.env.OPENAI_API_KEY;

const otel = setupOtel();
const instrumentation = new OpenAIAgentsInstrumentation({ tracerProvider: otel.provider });
// Exclusive mode (the default): replaces every SDK trace processor, including
// the default one that would export to OpenAI's servers.
instrumentation.manuallyInstrument(agents);
setTracingDisabled(false);

// ---------------------------------------------------------------- tools ----
function makeTools() {
  const getOrder = tool({
    name: 'get_order',
    description: 'Look up an order by id.',
    parameters: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) =>
      JSON.stringify({ order_id, status: 'delivered', total: 49.99, currency: 'EUR', item: 'kettle' }),
  });
  const getRefundPolicy = tool({
    name: 'get_refund_policy',
    description: 'Return the refund policy for a region.',
    parameters: z.object({ region: z.string() }),
    execute: async ({ region }) => JSON.stringify({ region, window_days: 30, damaged_items: 'full refund' }),
  });
  const issueRefund = tool({
    name: 'issue_refund',
    description: 'Issue a refund for an order.',
    parameters: z.object({ order_id: z.string(), amount: z.number(), reason: z.string() }),
    execute: async ({ order_id, amount }) =>
      JSON.stringify({ refund_id: 'R-7788', order_id, amount, status: 'issued' }),
  });
  const sendConfirmation = tool({
    name: 'send_confirmation',
    description: 'Send the customer a confirmation message.',
    parameters: z.object({ order_id: z.string(), channel: z.string() }),
    // A plain (non-JSON) string result, to show how text results are recorded.
    execute: async ({ order_id, channel }) => `confirmation for ${order_id} sent via ${channel}`,
  });
  return { getOrder, getRefundPolicy, issueRefund, sendConfirmation };
}

function makeFailingTools() {
  const { getOrder } = makeTools();
  const issueRefund = tool({
    name: 'issue_refund',
    description: 'Issue a refund for an order.',
    parameters: z.object({ order_id: z.string(), amount: z.number(), reason: z.string() }),
    execute: async () => {
      throw new Error('payment gateway timeout (simulated)');
    },
  });
  return { getOrder, issueRefund };
}

// ------------------------------------------------------- scripted models ----
/** Checks the runner fed back one function_call_result per call of the previous turn. */
function assertToolResultsFed(input, previousTurn) {
  if (!previousTurn?.calls) return;
  const items = Array.isArray(input) ? input : [];
  for (const call of previousTurn.calls) {
    const found = items.some(
      (it) => it?.type === 'function_call_result' && (it.callId ?? it.call_id) === call.id,
    );
    if (!found) throw new Error(`model input lacks a result for ${call.id}`);
  }
}

function agentOutputItems(turn, index) {
  if (turn.calls) {
    return turn.calls.map((c) => ({
      type: 'function_call',
      id: `fc_${index}_${c.id}`,
      callId: c.id,
      name: c.name,
      arguments: JSON.stringify(c.args),
      status: 'completed',
    }));
  }
  return [
    {
      type: 'message',
      id: `msg_${index}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: turn.text }],
    },
  ];
}

/**
 * A hand-written Model (the @openai/agents `Model` interface). Each call is
 * wrapped in withGenerationSpan so the SDK emits a `generation` span; the span
 * data carries the SDK's own input items and output items.
 */
class ScriptedModel {
  constructor(script) {
    this.script = script;
    this.turn = 0;
  }

  async getResponse(request) {
    const index = this.turn++;
    const turn = this.script[index];
    if (!turn) throw new Error(`script exhausted at turn ${index}`);
    assertToolResultsFed(request.input, this.script[index - 1]);
    return withGenerationSpan(async (span) => {
      span.spanData.model = 'scripted-model';
      span.spanData.model_config = { temperature: request.modelSettings.temperature ?? 0 };
      const inputItems =
        typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
      span.spanData.input = [
        ...(request.systemInstructions ? [{ role: 'system', content: request.systemInstructions }] : []),
        ...inputItems,
      ];
      const output = agentOutputItems(turn, index);
      span.spanData.output = output;
      const usage = { input_tokens: 100 + index * 40, output_tokens: 20 + index };
      span.spanData.usage = usage;
      return {
        usage: new Usage({
          requests: 1,
          inputTokens: usage.input_tokens,
          outputTokens: usage.output_tokens,
          totalTokens: usage.input_tokens + usage.output_tokens,
        }),
        output,
        responseId: `resp_scripted_${index}`,
      };
    });
  }

  // The captures use non-streamed runs; streaming is implemented for
  // completeness of the interface (emits the same final response).
  async *getStreamedResponse(request) {
    const response = await this.getResponse(request);
    yield {
      type: 'response_done',
      response: {
        id: response.responseId,
        usage: {
          requests: 1,
          inputTokens: response.usage.inputTokens,
          outputTokens: response.usage.outputTokens,
          totalTokens: response.usage.totalTokens,
        },
        output: response.output,
      },
    };
  }
}

/** An OpenAI client whose fetch answers from the script (no network). */
function fakeOpenAIClient(script, api) {
  let index = 0;
  const seen = [];
  const client = new OpenAI({
    apiKey: 'sk-offline-fake',
    baseURL: 'http://offline.invalid/v1',
    maxRetries: 0,
    fetch: async (url, init) => {
      const body = JSON.parse(init.body);
      seen.push({ url: String(url), body });
      const turn = script[index];
      if (!turn) throw new Error(`script exhausted at turn ${index}`);
      const payload = api === 'responses' ? responsesPayload(turn, index, body) : chatPayload(turn, index);
      index++;
      return new Response(JSON.stringify(payload), {
        status: 200,
        headers: { 'content-type': 'application/json', 'x-request-id': `req_offline_${index}` },
      });
    },
  });
  return { client, seen };
}

// Echoes request fields the way the real Responses API does (instructions,
// tools, tool_choice, ...), so the span sees a realistic Response object.
function responsesPayload(turn, index, body) {
  const output = turn.calls
    ? turn.calls.map((c) => ({
        type: 'function_call',
        id: `fc_${index}_${c.id}`,
        call_id: c.id,
        name: c.name,
        arguments: JSON.stringify(c.args),
        status: 'completed',
      }))
    : [
        {
          type: 'message',
          id: `msg_${index}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: turn.text, annotations: [] }],
        },
      ];
  return {
    id: `resp_offline_${index}`,
    object: 'response',
    created_at: 1767225600 + index,
    status: 'completed',
    model: 'gpt-4.1-2025-04-14',
    output,
    instructions: body.instructions ?? null,
    previous_response_id: body.previous_response_id ?? null,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    temperature: body.temperature ?? 1,
    top_p: body.top_p ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    truncation: body.truncation ?? 'disabled',
    store: body.store ?? true,
    error: null,
    incomplete_details: null,
    usage: {
      input_tokens: 100 + index * 40,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 20 + index,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 120 + index * 41,
    },
  };
}

function chatPayload(turn, index) {
  const message = turn.calls
    ? {
        role: 'assistant',
        content: null,
        tool_calls: turn.calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.args) },
        })),
      }
    : { role: 'assistant', content: turn.text };
  return {
    id: `chatcmpl-offline-${index}`,
    object: 'chat.completion',
    created: 1767225600 + index,
    model: 'gpt-4.1-2025-04-14',
    choices: [{ index: 0, message, finish_reason: turn.calls ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 100 + index * 40, completion_tokens: 20 + index, total_tokens: 120 + index * 41 },
  };
}

// ----------------------------------------------------------------- runs ----
async function capture({ fileName, model, tools, workflowName, expectError = false }) {
  const agent = new Agent({
    name: 'Refund agent',
    instructions: INSTRUCTIONS,
    model,
    tools: Object.values(tools),
  });
  const runner = new Runner({ workflowName });
  const result = await runner.run(agent, USER_PROMPT, { maxTurns: 10 });
  console.log(`${fileName}: finalOutput = ${JSON.stringify(result.finalOutput)}`);
  if (!result.finalOutput) throw new Error(`${fileName}: run produced no final output`);
  // Trace end is reported through an async processor callback; let it settle.
  await new Promise((r) => setTimeout(r, 50));
  const spans = await writeFixture(otel, fileName, { expectSpans: 5 });
  if (expectError && !spans.some((s) => s.status.code === 2)) {
    throw new Error(`${fileName}: expected an ERROR span`);
  }
}

await capture({
  fileName: 'openinference-openai-agents-refund.otlp.json',
  model: new ScriptedModel(REFUND_SCRIPT),
  tools: makeTools(),
  workflowName: 'refund workflow',
});

await capture({
  fileName: 'openinference-openai-agents-tool-error.otlp.json',
  model: new ScriptedModel(TOOL_ERROR_SCRIPT),
  tools: makeFailingTools(),
  workflowName: 'refund workflow (tool error)',
  expectError: true,
});

{
  const { client, seen } = fakeOpenAIClient(REFUND_SCRIPT, 'responses');
  await capture({
    fileName: 'openinference-openai-agents-responses-refund.otlp.json',
    model: new OpenAIResponsesModel(client, 'gpt-4.1'),
    tools: makeTools(),
    workflowName: 'refund workflow (responses model)',
  });
  if (!seen.every((s) => s.url.endsWith('/responses'))) throw new Error('unexpected endpoint');
}

{
  const { client, seen } = fakeOpenAIClient(REFUND_SCRIPT, 'chat');
  await capture({
    fileName: 'openinference-openai-agents-chatcompletions-refund.otlp.json',
    model: new OpenAIChatCompletionsModel(client, 'gpt-4.1'),
    tools: makeTools(),
    workflowName: 'refund workflow (chat completions model)',
  });
  if (!seen.every((s) => s.url.endsWith('/chat/completions'))) throw new Error('unexpected endpoint');
}

instrumentation.disable?.();
await otel.provider.shutdown();
