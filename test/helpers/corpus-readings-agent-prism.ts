/**
 * What the traces of `openinference-agent-prism/` in the real-world corpus must read as, written
 * from their raw spans. In the AgentExecutor trace each generation is recorded twice: LangChain's
 * `ChatOpenAI` span in the chain, and the OpenAI client's `ChatCompletion` span as a sibling
 * under the root (with the call ids the LangChain span lacks): one turn each. The tool spans
 * record their input as a Python repr; the arguments read are the ones the model asked for.
 */
import { conversation, type ExpectedTrace, ok } from './corpus-reading-types.js';

export const AGENT_PRISM_TRACES: ExpectedTrace[] = [
  {
    file: 'openinference-agent-prism/langchain-agentexecutor-tavily.otlp.json',
    traceId: '3c72f582dd45872020700dfae35aef9d',
    runs: [
      {
        spanId: '4b613ab5cfa187ed',
        name: 'AgentExecutor',
        turns: conversation([
          ['64b34917eba7c58e', ['call_kW83onhuRFzCvfhqM524IExy']],
          ['a8bc0340951fb56e', ['call_fhSEK1V9vr9BNAe9wcbyVHDt']],
          ['3cba386a25a15c0a', []],
        ]),
      },
    ],
    calls: {
      call_kW83onhuRFzCvfhqM524IExy: {
        tool: 'tavily_search',
        args: { query: 'latest AI trends 2024', time_range: 'year', topic: 'general' },
        outcome: ok,
        result: { containing: ['Top AI Trends in 2024 - neudesic.com'] },
        agent: 'AgentExecutor',
      },
      call_fhSEK1V9vr9BNAe9wcbyVHDt: {
        tool: 'tavily_extract',
        args: {
          urls: [
            'https://www.neudesic.com/blog/2024-recap-ai-trends/',
            'https://blogs.microsoft.com/blog/2024/11/12/idcs-2024-ai-opportunity-study-top-five-ai-trends-to-watch/',
            'https://aimagazine.com/articles/top-10-ai-trends-of-2024',
            'https://explodingtopics.com/blog/ai-trends',
          ],
          extract_depth: 'advanced',
        },
        outcome: ok,
        result: { containing: ['Published Time: 2024-12-31T13:36:55-08:00'] },
        agent: 'AgentExecutor',
      },
    },
    order: [[['call_kW83onhuRFzCvfhqM524IExy'], ['call_fhSEK1V9vr9BNAe9wcbyVHDt']]],
  },
  {
    // smolagents open deep research, recorded by the OpenAI client's instrumentation only: six
    // model calls side by side under the root. The CodeAgent manager calls its managed agent
    // `search_agent` and then `final_answer` in Python in its output; the managed agent (a
    // ToolCallingAgent with its own conversation) runs between the manager's two code steps and
    // makes structured calls. Results come back as `Observation:` text.
    file: 'openinference-agent-prism/smolagents-deep-research-managed-agent.otlp.json',
    traceId: 'ba8ab01bf086833c989ce2a7a29eee31',
    runs: [
      {
        spanId: '',
        turns: conversation([
          ['6da5963a76f00399', []],
          ['338d5ac2c68af598', ['turn:338d5ac2c68af598#0']],
          ['d6f413732b60ddc3', ['turn:d6f413732b60ddc3#0']],
        ]),
      },
      {
        spanId: '',
        runId: 'run:04dc3df345b4c1d7',
        name: 'search_agent',
        parentCall: 'turn:338d5ac2c68af598#0',
        turns: conversation([
          ['04dc3df345b4c1d7', []],
          ['aa539eb36c9027e2', ['call_TzKWLXOFTa6np870KErcqInF']],
          ['d372de39fd724172', ['call_4by1BwCUZuVjAErexOsd9gQ9']],
        ]),
      },
    ],
    calls: {
      'turn:338d5ac2c68af598#0': {
        tool: 'search_agent',
        args: null,
        code: { argsStartWith: '"Hello! Could you help me find authoritative resources' },
        noCallId: true,
        outcome: ok,
        result: { containing: ["Here is the final answer from your managed agent 'search_agent'"] },
      },
      call_TzKWLXOFTa6np870KErcqInF: {
        tool: 'web_search',
        args: { query: 'AI 2025 forecasts from Gartner, IDC, Deloitte, McKinsey' },
        outcome: ok,
        result: { containing: ['## Search Results', 'Key Generative AI Statistics and Trends for 2025'] },
        agent: 'search_agent',
      },
      // The managed agent's answer goes back to the manager as its call's result; nothing after
      // shows this call's own.
      call_4by1BwCUZuVjAErexOsd9gQ9: {
        tool: 'final_answer',
        args: null,
        argsJsonStartsWith: '{"answer":"### 1. Task outcome (short version):',
        outcome: { status: 'no_result' },
        result: { none: true },
        agent: 'search_agent',
      },
      'turn:d6f413732b60ddc3#0': {
        tool: 'final_answer',
        args: null,
        code: { argsStartWith: '"""### 1. Task outcome (short version):' },
        noCallId: true,
        outcome: { status: 'no_result' },
        result: { none: true },
      },
    },
    order: [
      [['turn:338d5ac2c68af598#0'], ['turn:d6f413732b60ddc3#0']],
      [['call_TzKWLXOFTa6np870KErcqInF'], ['call_4by1BwCUZuVjAErexOsd9gQ9'], ['turn:d6f413732b60ddc3#0']],
    ],
    // The calls in code are read, but not what they were given or whether they ran.
    warnings: ['unread_tool_activity'],
  },
  {
    // A retrieval chain: one generation over retrieved documents, no tool.
    file: 'openinference-agent-prism/langchain-rag-no-tool.otlp.json',
    traceId: 'b47d761fe79be88aee41342cdd527268',
    runs: [{ spanId: '', turns: conversation([['19c9ad380e6da405', []]]) }],
    calls: {},
    order: [],
  },
];
