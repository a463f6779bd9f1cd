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
    // A retrieval chain: one generation over retrieved documents, no tool.
    file: 'openinference-agent-prism/langchain-rag-no-tool.otlp.json',
    traceId: 'b47d761fe79be88aee41342cdd527268',
    runs: [{ spanId: '', turns: conversation([['19c9ad380e6da405', []]]) }],
    calls: {},
    order: [],
  },
];
