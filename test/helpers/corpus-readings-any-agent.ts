/** What the traces of `any-agent/` in the real-world corpus must read as, written from their raw spans. */
import type { ExpectedTrace } from './corpus-reading-types.js';
import { ok } from './corpus-reading-types.js';

const NEW_YORK = { timezone: 'America/New_York' };
const STEPS_ANSWER =
  '{"steps": [{"number": 1, "description": "Get current time in the America/New_York timezone."}, {"number": 2, "description": "Write the year to a file."}]}';
const STEPS_RESULT = {
  success: true,
  result: {
    steps: [
      { number: 1, description: 'Get current time in the America/New_York timezone.' },
      { number: 2, description: 'Write the year to a file.' },
    ],
  },
};

// any-agent records a model call's input only on a run's first call_llm: each later turn is taken
// to be shown the results of the calls the turn before it asked for (what the agent loop sends).
// A last call_llm after the answer (LangChain, LlamaIndex: the structured-output pass) was shown
// nothing new.
export const ANY_AGENT_TRACES: ExpectedTrace[] = [
  {
    file: 'any-agent/agno-time-write-file.otlp.json',
    traceId: '1de0532b350588ff152b1edf6bf358b3',
    runs: [
      {
        spanId: '26cae1fc4b896711',
        name: 'any_agent',
        turns: [
          { spanId: '19145660c14f5a36', issued: ['LlAGPjfO0'], consumed: [] },
          { spanId: '4eef67eb98690e82', issued: ['wzCUjvRq4'], consumed: ['LlAGPjfO0'] },
          { spanId: '51ae1a4394cea471', issued: [], consumed: ['wzCUjvRq4'] },
        ],
      },
    ],
    calls: {
      LlAGPjfO0: {
        tool: 'get_current_time',
        args: NEW_YORK,
        outcome: ok,
        result: { exactly: { ...NEW_YORK, datetime: '2025-09-16T08:43:15-04:00', is_dst: true } },
        agent: 'any_agent',
      },
      wzCUjvRq4: {
        tool: 'write_file',
        args: { text: '2025' },
        outcome: ok,
        result: { exactly: {} },
        agent: 'any_agent',
      },
    },
    order: [[['LlAGPjfO0'], ['wzCUjvRq4']]],
  },
  {
    // Every call_llm / execute_tool names a parent (ADK's own spans) the export does not hold:
    // nothing records which run they belong to (they lie within the any_agent run's interval,
    // but time is not parenthood), so they stay in the trace's run, with span.parent_missing.
    file: 'any-agent/google-adk-time-write-file.otlp.json',
    traceId: 'cdbd7b99cef221c28dd6d03c27d09b4c',
    runs: [
      {
        // The trace's own run: no span says which agent run these turns belong to.
        spanId: '',
        turns: [
          { spanId: '28b3922a9d89a4ac', issued: ['jbUWqgIUr'], consumed: [] },
          { spanId: '4dfb98a87c017887', issued: ['j5pzf0TaM'], consumed: ['jbUWqgIUr'] },
          { spanId: '5d77d7d20d0b5d84', issued: ['Je755BQAS'], consumed: ['j5pzf0TaM'] },
        ],
      },
    ],
    calls: {
      jbUWqgIUr: {
        tool: 'get_current_time',
        args: NEW_YORK,
        outcome: ok,
        result: { exactly: { ...NEW_YORK, datetime: '2025-09-16T08:43:06-04:00', is_dst: true } },
      },
      j5pzf0TaM: {
        tool: 'write_file',
        args: { text: '2025' },
        outcome: ok,
        result: { exactly: {} },
      },
      Je755BQAS: {
        tool: 'final_output',
        args: { answer: STEPS_ANSWER },
        outcome: ok,
        result: { exactly: STEPS_RESULT },
      },
    },
    order: [[['jbUWqgIUr'], ['j5pzf0TaM'], ['Je755BQAS']]],
    warnings: ['span.parent_missing'],
  },
  {
    // No call ids: each execute_tool is the request of the call_llm before it (same tool, same args).
    file: 'any-agent/langchain-time-write-file.otlp.json',
    traceId: '572318454595034fe5076610d6400542',
    runs: [
      {
        spanId: 'd78a58cabe908b85',
        name: 'any_agent',
        turns: [
          { spanId: 'a78bc9a92c52cd14', issued: ['span:ef6718a10070ff84'], consumed: [] },
          {
            spanId: '9e57109d37201d92',
            issued: ['span:fe93cc7115591d21'],
            consumed: ['span:ef6718a10070ff84'],
          },
          { spanId: '32fc8bcda1853115', issued: [], consumed: ['span:fe93cc7115591d21'] },
          { spanId: 'f0ed860f11d4a132', issued: [], consumed: [] },
        ],
      },
    ],
    calls: {
      'span:ef6718a10070ff84': {
        tool: 'get_current_time',
        args: NEW_YORK,
        outcome: ok,
        result: { exactly: { ...NEW_YORK, datetime: '2025-09-16T09:16:41-04:00', is_dst: true } },
        agent: 'any_agent',
      },
      'span:fe93cc7115591d21': {
        tool: 'write_file',
        args: { text: '2025' },
        outcome: ok,
        result: { exactly: null },
        agent: 'any_agent',
      },
    },
    order: [[['span:ef6718a10070ff84'], ['span:fe93cc7115591d21']]],
  },
  {
    // No call ids, and the requests' tool.args are "{}" (any-agent's LlamaIndex callback records
    // them before they are filled): each execute_tool is the request of the call_llm before it by
    // tool name, and its own gen_ai.tool.args are the arguments the tool ran with.
    file: 'any-agent/llama-index-time-write-file.otlp.json',
    traceId: '89c41176422c506985d55a0d2d2091db',
    runs: [
      {
        spanId: 'aa0ba681ec5a2d67',
        name: 'any_agent',
        turns: [
          { spanId: '40f005a559adaeeb', issued: ['span:8df3e9cf559c1661'], consumed: [] },
          {
            spanId: '80a3e4a9dffe5e57',
            issued: ['span:d5c472abbc14a182'],
            consumed: ['span:8df3e9cf559c1661'],
          },
          {
            spanId: '17f572fd60d11608',
            issued: ['span:fab84bd45c47aa80'],
            consumed: ['span:d5c472abbc14a182'],
          },
          { spanId: '5b8e969d6da577a8', issued: [], consumed: ['span:fab84bd45c47aa80'] },
          { spanId: 'd7fe07b081bc4e9a', issued: [], consumed: [] },
        ],
      },
    ],
    calls: {
      'span:8df3e9cf559c1661': {
        tool: 'get_current_time',
        args: NEW_YORK,
        outcome: ok,
        result: { exactly: { ...NEW_YORK, datetime: '2025-09-16T09:14:59-04:00', is_dst: true } },
        agent: 'any_agent',
      },
      'span:d5c472abbc14a182': {
        tool: 'write_file',
        args: { text: '2025' },
        outcome: ok,
        result: { exactly: 'None' },
        agent: 'any_agent',
      },
      'span:fab84bd45c47aa80': {
        tool: 'final_output',
        args: { answer: STEPS_ANSWER },
        outcome: ok,
        result: { exactly: STEPS_RESULT },
        agent: 'any_agent',
      },
    },
    order: [[['span:8df3e9cf559c1661'], ['span:d5c472abbc14a182'], ['span:fab84bd45c47aa80']]],
  },
];
