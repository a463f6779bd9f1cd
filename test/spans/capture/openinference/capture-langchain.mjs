// Captures OpenInference spans from LangChain.js / LangGraph through
// @arizeai/openinference-instrumentation-langchain, fully offline.
//
// The agent is LangGraph's prebuilt createReactAgent (agent node + ToolNode).
// Two model set-ups, both scripted (no network, no API key):
//  - a fake chat model built on FakeStreamingChatModel from
//    @langchain/core/utils/testing (subclassed only so that it walks a script
//    of turns; the stock class always repeats its first response)
//    -> openinference-langchain-refund.otlp.json,
//       openinference-langchain-tool-error.otlp.json
//  - the real ChatOpenAI from @langchain/openai on an OpenAI client whose
//    `fetch` is an in-process fake -> openinference-langchain-chatopenai-refund.otlp.json
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { AIMessage, AIMessageChunk } from '@langchain/core/messages';
import { ChatGenerationChunk } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { FakeStreamingChatModel } from '@langchain/core/utils/testing';
// The main entry point registers LangChain's AsyncLocalStorage singleton (as any
// app importing from '@langchain/langgraph' does); '/prebuilt' alone does not.
import '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { setupOtel, writeFixture } from './lib/otel.mjs';
import { INSTRUCTIONS, REFUND_SCRIPT, TOOL_ERROR_SCRIPT, USER_PROMPT } from './lib/script.mjs';

// Never send anything to LangSmith, never reach OpenAI.
for (const k of Object.keys(process.env)) {
  if (/^(LANGCHAIN|LANGSMITH)_/.test(k) || k === 'OPENAI_API_KEY') delete process.env[k];
}

const otel = setupOtel();
const instrumentation = new LangChainInstrumentation({ tracerProvider: otel.provider });
instrumentation.manuallyInstrument(CallbackManagerModule);

// ---------------------------------------------------------------- tools ----
function makeTools({ failRefund = false } = {}) {
  const getOrder = tool(
    async ({ order_id }) =>
      JSON.stringify({ order_id, status: 'delivered', total: 49.99, currency: 'EUR', item: 'kettle' }),
    { name: 'get_order', description: 'Look up an order by id.', schema: z.object({ order_id: z.string() }) },
  );
  const getRefundPolicy = tool(
    async ({ region }) => JSON.stringify({ region, window_days: 30, damaged_items: 'full refund' }),
    {
      name: 'get_refund_policy',
      description: 'Return the refund policy for a region.',
      schema: z.object({ region: z.string() }),
    },
  );
  const issueRefund = tool(
    async ({ order_id, amount }) => {
      if (failRefund) throw new Error('payment gateway timeout (simulated)');
      return JSON.stringify({ refund_id: 'R-7788', order_id, amount, status: 'issued' });
    },
    {
      name: 'issue_refund',
      description: 'Issue a refund for an order.',
      schema: z.object({ order_id: z.string(), amount: z.number(), reason: z.string() }),
    },
  );
  const sendConfirmation = tool(
    // A plain (non-JSON) string result, to show how text results are recorded.
    async ({ order_id, channel }) => `confirmation for ${order_id} sent via ${channel}`,
    {
      name: 'send_confirmation',
      description: 'Send the customer a confirmation message.',
      schema: z.object({ order_id: z.string(), channel: z.string() }),
    },
  );
  return [getOrder, getRefundPolicy, issueRefund, sendConfirmation];
}

// ------------------------------------------------------ scripted fake model ----
/**
 * The AIMessage a turn produces. Tool calls are set both as LangChain's
 * standard `tool_calls` (what ToolNode executes) and as OpenAI-style
 * `additional_kwargs.tool_calls` (what ChatOpenAI also sets, and the only
 * place the OpenInference LangChain tracer reads tool calls from).
 */
function scriptedMessage(turn, index, Cls = AIMessage) {
  const calls = turn.calls ?? [];
  const usage = { input_tokens: 100 + index * 40, output_tokens: 20 + index, total_tokens: 120 + index * 41 };
  const fields = {
    id: `fake-msg-${index}`,
    content: turn.text ?? '',
    additional_kwargs: calls.length
      ? {
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.args) },
          })),
        }
      : {},
    response_metadata: { finish_reason: calls.length ? 'tool_calls' : 'stop', model_name: 'fake-tool-model' },
    usage_metadata: usage,
  };
  if (Cls === AIMessageChunk) {
    fields.tool_call_chunks = calls.map((c, i) => ({
      id: c.id,
      name: c.name,
      args: JSON.stringify(c.args),
      index: i,
      type: 'tool_call_chunk',
    }));
  } else {
    fields.tool_calls = calls.map((c) => ({ id: c.id, name: c.name, args: c.args, type: 'tool_call' }));
  }
  return new Cls(fields);
}

/**
 * FakeStreamingChatModel that answers turn after turn from a shared script.
 * bindTools is re-implemented only to keep this subclass (the parent's
 * bindTools builds a plain FakeStreamingChatModel).
 */
class ScriptedFakeChatModel extends FakeStreamingChatModel {
  constructor({ script, state = { turn: 0 }, ...rest }) {
    super({ sleep: 0, ...rest });
    this.script = script;
    this.state = state;
  }

  bindTools(tools) {
    const next = new ScriptedFakeChatModel({ script: this.script, state: this.state });
    next.tools = [...this.tools, ...tools];
    return next.withConfig({ tools: next.tools.map((t) => convertToOpenAITool(t)) });
  }

  #nextTurn(messages) {
    const index = this.state.turn++;
    const turn = this.script[index];
    if (!turn) throw new Error(`script exhausted at turn ${index}`);
    const previous = this.script[index - 1];
    for (const call of previous?.calls ?? []) {
      if (!messages.some((m) => m._getType() === 'tool' && m.tool_call_id === call.id)) {
        throw new Error(`model input lacks a ToolMessage for ${call.id}`);
      }
    }
    return { turn, index };
  }

  async _generate(messages) {
    const { turn, index } = this.#nextTurn(messages);
    const message = scriptedMessage(turn, index);
    return { generations: [{ text: turn.text ?? '', message }], llmOutput: {} };
  }

  async *_streamResponseChunks(messages, _options, runManager) {
    const { turn, index } = this.#nextTurn(messages);
    const message = scriptedMessage(turn, index, AIMessageChunk);
    const chunk = new ChatGenerationChunk({ message, text: turn.text ?? '' });
    yield chunk;
    await runManager?.handleLLMNewToken(turn.text ?? '', undefined, undefined, undefined, undefined, {
      chunk,
    });
  }
}

// ------------------------------------------- real ChatOpenAI, fake transport ----
function fakeChatOpenAI(script) {
  let index = 0;
  const fetch = async (url, init) => {
    if (!String(url).endsWith('/chat/completions')) throw new Error(`unexpected endpoint ${url}`);
    const body = JSON.parse(init.body);
    const turn = script[index];
    if (!turn) throw new Error(`script exhausted at turn ${index}`);
    for (const call of script[index - 1]?.calls ?? []) {
      if (!body.messages.some((m) => m.role === 'tool' && m.tool_call_id === call.id)) {
        throw new Error(`request lacks a tool message for ${call.id}`);
      }
    }
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
    const payload = {
      id: `chatcmpl-offline-${index}`,
      object: 'chat.completion',
      created: 1767225600 + index,
      model: 'gpt-4.1-2025-04-14',
      choices: [{ index: 0, message, finish_reason: turn.calls ? 'tool_calls' : 'stop', logprobs: null }],
      usage: {
        prompt_tokens: 100 + index * 40,
        completion_tokens: 20 + index,
        total_tokens: 120 + index * 41,
      },
    };
    index++;
    return new Response(JSON.stringify(payload), {
      status: 200,
      headers: { 'content-type': 'application/json', 'x-request-id': `req_offline_${index}` },
    });
  };
  return new ChatOpenAI({
    model: 'gpt-4.1',
    temperature: 0,
    apiKey: 'sk-offline-fake',
    maxRetries: 0,
    configuration: { baseURL: 'http://offline.invalid/v1', fetch },
  });
}

// ----------------------------------------------------------------- runs ----
async function capture({ fileName, llm, tools, expectError = false }) {
  const agent = createReactAgent({ llm, tools, prompt: INSTRUCTIONS, name: 'refund_agent' });
  const result = await agent.invoke(
    { messages: [{ role: 'user', content: USER_PROMPT }] },
    { recursionLimit: 20, runName: 'refund_agent' },
  );
  const last = result.messages.at(-1);
  console.log(`${fileName}: final = ${JSON.stringify(last.content)}`);
  if (last._getType() !== 'ai' || !last.content) throw new Error(`${fileName}: no final AI text`);
  const spans = await writeFixture(otel, fileName, { expectSpans: 5 });
  if (expectError && !spans.some((s) => s.status.code === 2)) {
    throw new Error(`${fileName}: expected an ERROR span`);
  }
}

await capture({
  fileName: 'openinference-langchain-refund.otlp.json',
  llm: new ScriptedFakeChatModel({ script: REFUND_SCRIPT }),
  tools: makeTools(),
});

await capture({
  fileName: 'openinference-langchain-tool-error.otlp.json',
  llm: new ScriptedFakeChatModel({ script: TOOL_ERROR_SCRIPT }),
  tools: makeTools({ failRefund: true }),
  expectError: true,
});

await capture({
  fileName: 'openinference-langchain-chatopenai-refund.otlp.json',
  llm: fakeChatOpenAI(REFUND_SCRIPT),
  tools: makeTools(),
});

await otel.provider.shutdown();
