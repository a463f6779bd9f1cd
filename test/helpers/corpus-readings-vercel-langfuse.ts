/**
 * What the traces of `vercel-ai-langfuse-export/` in the real-world corpus must read as, written
 * from their raw spans: one `ai.streamText` run (no `ai.telemetry.functionId`, so unnamed) under
 * the Langfuse SDK's `handle-chatbot-message`, its `ai.streamText.doStream` steps the turns, and
 * the MCP tool `searchLangfuseDocs` read from its `ai.toolCall` span. No session id is recorded.
 * The last `doStream` of the two traces that searched was stored without any attribute: alone it
 * would be a turn whose requests are unread, but it is its run's last step and the run span
 * repeats that step's finish (`stop`), so it asked for nothing; what it was shown is the
 * previous step's results, as for any step whose input was not recorded.
 */
import type { ExpectedTrace } from './corpus-reading-types.js';
import { conversation, ok } from './corpus-reading-types.js';

const SEARCH = 'searchLangfuseDocs';

export const VERCEL_LANGFUSE_TRACES: ExpectedTrace[] = [
  {
    file: 'vercel-ai-langfuse-export/docs-chatbot-no-tool.otlp.json',
    traceId: '845c2c534cee1b98266081dd72ed3c30',
    runs: [{ spanId: '57e11b2e7bf6b62a', turns: conversation([['6310949eab3e9b67', []]]) }],
    calls: {},
    order: [],
  },
  {
    file: 'vercel-ai-langfuse-export/docs-chatbot-search-dataset.otlp.json',
    traceId: '6f58ac41090ac81ce6203900dadf8e6b',
    runs: [
      {
        spanId: '31ccdfbd9381c993',
        turns: conversation([
          ['a44bd80c743afa87', ['call_Wgy5Y139OQnSh7grDUUE0iil']],
          ['00db41221c0d2850', []],
        ]),
      },
    ],
    calls: {
      call_Wgy5Y139OQnSh7grDUUE0iil: {
        tool: SEARCH,
        args: {
          query:
            'What is a dataset in Langfuse? definition, use cases, evaluation, prompt testing, datasets feature docs',
        },
        outcome: ok,
        result: { containing: ['inkeep-chatcmpl-1761a743-0fb1-4e4d-9c1c-10d4960ef29f', '"isError":false'] },
      },
    },
    order: [],
  },
  {
    file: 'vercel-ai-langfuse-export/docs-chatbot-search-n-plus-1.otlp.json',
    traceId: 'ac29be521ce79d5df06d9081b50f2cb3',
    runs: [
      {
        spanId: 'acf76ba316194a49',
        turns: conversation([
          ['741b099d7586a62f', ['call_AOk8le1i4tNgzuTtytNcqD5Q']],
          ['fe102fec4ed78754', []],
        ]),
      },
    ],
    calls: {
      call_AOk8le1i4tNgzuTtytNcqD5Q: {
        tool: SEARCH,
        args: {
          query:
            'N+1 evaluations Langfuse how to implement n+1 evaluation pattern batch eval per prediction vs per dataset Python JS',
        },
        outcome: ok,
        result: { containing: ['inkeep-chatcmpl-40fc3a6d-a341-4906-ba8f-eecf1570e0e3', '"isError":false'] },
      },
    },
    order: [],
  },
];
