/**
 * What each trace of the shared real-world corpus must read as, written from its raw spans
 * (and SOURCES.md): every tool call the model made with its arguments, outcome and result, the
 * turn that asked for it and the turns shown its result, the order between calls (groups of one
 * chain: a group's calls are concurrent, every call of a group happened before every call of the
 * later groups), the agent runs and which call started a sub-agent; nothing else. Used by the
 * reading tests and by `toolpath inspect`'s.
 */
import type { ExpectedTrace } from './corpus-reading-types.js';
import { conversation, ok } from './corpus-reading-types.js';
import { AGENT_PRISM_TRACES } from './corpus-readings-agent-prism.js';
import { AGNTCY_TRACES } from './corpus-readings-agntcy.js';
import { ANY_AGENT_TRACES } from './corpus-readings-any-agent.js';
import { SMOLTRACE_TRACES } from './corpus-readings-smoltrace.js';
import { VERCEL_LANGFUSE_TRACES } from './corpus-readings-vercel-langfuse.js';

export type { ExpectedCall, ExpectedRun, ExpectedTrace, ExpectedTurn } from './corpus-reading-types.js';

const HELM_LIST_TEXT = ['NAME', 'kagent-crds', 'deployed'];
const GRAPHQL_ERROR =
  'Error fetching GraphQL query \'exampleMutation\' with variables \'{"input": {"datasetId": "fixture-dataset-4", "spanIds": ["fx-otel-span-1"]}}\': [{"message": "an unexpected error occurred"}]';

/** The first corpus's traces, each as its raw spans say. */
const FIRST_TRACES: ExpectedTrace[] = [
  {
    // ADK Python's call_llm records the generation, OpenLLMetry's openai.chat under it records it
    // again, and the call once more as execute_tool: two turns, one call.
    file: 'adk-python-kagent/helm-list-releases.otlp.json',
    traceId: '3e289017fe03ffd7c4145316d2eb3d0d',
    conversationId: 'ctx-7ed9780f-3688-4fc0-b10b-2e4df2f83cf0',
    runs: [
      {
        spanId: '581f1448d659341f',
        name: 'helm_agent',
        turns: conversation([
          ['e37fdd8f56146d31', ['call_P09kjRKHTTJA02oB9HIe4u5t']],
          ['e4594ab9853c8b23', []],
        ]),
      },
    ],
    calls: {
      call_P09kjRKHTTJA02oB9HIe4u5t: {
        tool: 'helm_list_releases',
        args: {},
        outcome: ok,
        result: { containing: HELM_LIST_TEXT },
        agent: 'helm_agent',
      },
    },
    order: [],
  },
  {
    file: 'adk-python-kagent/helm-list-releases-json.otlp.json',
    traceId: 'c9a03cc4e80ea7a22332db0fe4dc3adf',
    conversationId: 'ctx-9cf62851-eac3-4802-ae09-0825201ee0b4',
    runs: [
      {
        spanId: '304b7df7e81946d0',
        name: 'helm_agent',
        turns: conversation([
          ['53fa99ffac3866c5', ['call_jLiZJa0OLDaaIpPoJzSHAnVM']],
          ['76f49a72aa2d583d', []],
        ]),
      },
    ],
    calls: {
      call_jLiZJa0OLDaaIpPoJzSHAnVM: {
        tool: 'helm_list_releases',
        args: { all_namespaces: 'true', output: 'json' },
        outcome: ok,
        result: { containing: ['\\"name\\":\\"jaeger\\"', '\\"name\\":\\"kagent\\"'] },
        agent: 'helm_agent',
      },
    },
    order: [],
  },
  {
    file: 'adk-python-kagent/k8s-no-tool.otlp.json',
    traceId: 'd497c9dd55717f2c5ecb79bda3028993',
    conversationId: 'ctx-d8251ac3-6289-464a-8404-0fc4e312e823',
    runs: [
      { spanId: 'bfdb163f37e04a47', name: 'k8s_agent', turns: conversation([['896fc6b7b215e46d', []]]) },
    ],
    calls: {},
    order: [],
  },
  {
    // Three spans per generation here (call_llm > generate_content > openai.chat), the ADK spans
    // under the httpx scope, and the Go controller's own invoke_agent span with nothing in it.
    file: 'adk-python-kagent/tempo-helm-list-releases.otlp.json',
    traceId: 'dd547580319ab0312cee07f1def50dad',
    conversationId: 'ctx-eff35888-55ab-4eb0-b90d-7b21f711f91f',
    runs: [
      {
        spanId: 'eb7f99f3e3ec5041',
        name: 'helm_agent',
        turns: conversation([
          ['ef7e626b81d68000', ['call_w0eKlvnaE7S9GQJeSSs0gn05']],
          ['c8186a2f55581ff1', []],
        ]),
      },
    ],
    calls: {
      call_w0eKlvnaE7S9GQJeSSs0gn05: {
        tool: 'helm_list_releases',
        args: {},
        outcome: ok,
        result: { containing: HELM_LIST_TEXT },
        agent: 'helm_agent',
      },
    },
    order: [],
  },
  {
    file: 'strands-python/strands-1.14-get-user-location.otlp.json',
    traceId: '4152d1fb2c48ff87d75abb96470b13d3',
    runs: [
      {
        spanId: '6c1738ba1c1d8275',
        name: 'Strands Agents',
        turns: conversation([
          ['106f9976ebd4e5ec', ['call_hdzL5ISsJA4mCJ1mWBGkqtzz']],
          ['4dec09c2d79adabf', []],
        ]),
      },
    ],
    calls: {
      call_hdzL5ISsJA4mCJ1mWBGkqtzz: {
        tool: 'get_user_location',
        args: {},
        outcome: ok,
        result: { exactly: 'London, UK' },
        agent: 'Strands Agents',
      },
    },
    order: [],
  },
  {
    file: 'claude-agent-sdk-logfire/bash-ls.otlp.json',
    traceId: '00000000000000000000000000000001',
    conversationId: 'ca03765b-a7e1-483b-9629-448c7aba5e7a',
    runs: [
      {
        spanId: '0000000000000001',
        turns: conversation([
          ['0000000000000003', ['toolu_01MRdgcFhYNo1LHvRQKvKckg']],
          ['0000000000000007', []],
        ]),
      },
    ],
    calls: {
      toolu_01MRdgcFhYNo1LHvRQKvKckg: {
        tool: 'Bash',
        args: { command: 'ls', description: 'List files in current directory' },
        outcome: ok,
        result: {
          exactly: {
            stdout:
              'CHANGELOG.md\nCLAUDE.md\nCONTRIBUTING.md\nLICENSE\nMakefile\nREADME.md\ndist\ndocs\nexamples\nignoreme\nlogfire\nlogfire-api\nmkdocs.yml\nplans\npyodide_test\npyproject.toml\nrelease\nscratch\nsite\nspecs\ntests\nuv.lock',
            stderr: '',
            interrupted: false,
            isImage: false,
            noOutputExpected: false,
          },
        },
      },
    },
    order: [],
  },
  {
    // No tools: the two agents answer in one generation each (their agent spans are AgentOps',
    // which toolpath does not read as agent runs).
    file: 'crewai-agentops/acp-songwriter-crew.otlp.json',
    traceId: 'b520ab60214d54b570cf701c7ad28faf',
    runs: [
      {
        spanId: '',
        turns: conversation([
          ['27ef04df3fea3e34', []],
          ['4c25a4c6bfca0f5b', []],
        ]),
      },
    ],
    calls: {},
    order: [],
  },
  {
    // pydantic-ai calls a FastMCP tool (its client span nested in the tool span: one call) whose
    // body runs a second agent through MCP sampling: that agent's one generation is recorded by
    // its sampling model's chat span and by the client's chat span under it.
    file: 'pydantic-ai-mcp-logfire/joker-mcp-sampling.otlp.json',
    traceId: '00000000000000000000000000000002',
    // The outer agent's id; the sampling agent's own id (span 21's run) is ignored, and said so.
    conversationId: 'conversation-of-run-span-3',
    warnings: ['conversation.other_ids'],
    runs: [
      {
        spanId: '0000000000000003',
        name: 'agent',
        turns: conversation([
          ['000000000000000b', ['call_YWeIZ4oGGwEnk9GIb443ZNys']],
          ['000000000000001f', []],
        ]),
      },
      {
        spanId: '0000000000000015',
        name: 'agent',
        parentSpanId: '0000000000000003',
        parentCall: 'call_YWeIZ4oGGwEnk9GIb443ZNys',
        turns: conversation([['0000000000000017', []]]),
      },
    ],
    calls: {
      call_YWeIZ4oGGwEnk9GIb443ZNys: {
        tool: 'joker',
        args: { theme: 'socks' },
        outcome: ok,
        result: {
          exactly: 'Why did the sock break up with the shoe?\n\nBecause it found something more "sole-ful!"',
        },
        agent: 'agent',
      },
    },
    order: [],
  },
  {
    file: 'openinference-phoenix-pxi/pxi-turn.otlp.json',
    traceId: '0a82a441bf870b1a19eea45d31dc7185',
    conversationId: 'fixture-session',
    runs: [
      {
        spanId: 'fb173a948cf4a99a',
        name: 'pxi.turn',
        turns: conversation([
          ['d2d6ee88baf619af', ['call-04']],
          ['d31f5b3c363e589d', ['call-05']],
          ['b87b7023cde7c7cd', ['call-06']],
          ['5078590bb55e7917', ['call-07']],
          ['d34beeb70cddcc1f', ['call-08']],
          ['ff521c8648fd7f87', ['call-09']],
          ['8c3456a7506c79f2', ['call-10']],
          ['85a7efae94754e0a', ['call-11']],
          ['802f83fa8e5d7f74', []],
        ]),
      },
    ],
    calls: {
      'call-04': {
        tool: 'list_datasets',
        args: {},
        outcome: ok,
        result: {
          exactly: {
            datasets: [
              { id: 'fixture-dataset-1', name: 'dataset_alpha', exampleCount: 5 },
              { id: 'fixture-dataset-2', name: 'dataset_beta', exampleCount: 3 },
            ],
            hasNextPage: true,
            endCursor: 'fixture-cursor',
          },
        },
      },
      'call-05': {
        tool: 'list_datasets',
        args: { after: 'fixture-cursor' },
        outcome: ok,
        result: {
          exactly: {
            datasets: [{ id: 'fixture-dataset-3', name: 'dataset_gamma', exampleCount: 2 }],
            hasNextPage: false,
          },
        },
      },
      'call-06': {
        tool: 'ask_user',
        args: {
          questions: [
            {
              id: 'q-dataset',
              prompt: 'Which dataset should receive this trace?',
              type: 'single',
              allow_freeform: true,
              options: [
                { id: 'opt-1', label: 'dataset_alpha', description: '[existing dataset]' },
                { id: 'opt-2', label: 'dataset_beta', description: '[existing dataset]' },
              ],
            },
          ],
        },
        outcome: ok,
        result: {
          exactly: {
            answers: { 'q-dataset': ['__freeform__'] },
            freeformTexts: { 'q-dataset': 'golden_examples' },
          },
        },
      },
      'call-07': {
        tool: 'create_dataset',
        args: { name: 'golden_examples', description: '[synthetic dataset description]' },
        outcome: ok,
        result: {
          exactly: { status: 'accepted', acceptedBy: 'user', message: 'Created dataset "golden_examples".' },
        },
      },
      'call-08': {
        tool: 'add_spans_to_dataset',
        args: { datasetName: 'golden_examples', spanIds: ['fx-otel-span-1'] },
        // The span's status message says what failed (its exception event was sanitized).
        outcome: { status: 'error', message: GRAPHQL_ERROR },
        result: { exactly: GRAPHQL_ERROR },
      },
      'call-09': {
        tool: 'bash',
        args: {
          summary: "Looking up the span's node ID",
          command: 'example-cli --vars \'{"sid": "fx-otel-span-1"}\' \'query { spanNode }\'',
        },
        outcome: ok,
        result: {
          exactly: {
            command: "example-cli 'query { spanNode }'",
            stdout: '{"getSpanByOtelId": {"id": "fixture-node-1"}}',
            exit_code: 0,
          },
        },
      },
      'call-10': {
        tool: 'add_spans_to_dataset',
        args: { datasetName: 'golden_examples', spanIds: ['fixture-node-1'] },
        outcome: ok,
        result: {
          exactly: {
            status: 'accepted',
            acceptedBy: 'user',
            message: 'Added 1 span(s) to dataset "golden_examples".',
          },
        },
      },
      'call-11': {
        tool: 'get_route_info',
        args: { query: 'dataset page' },
        outcome: ok,
        // The tool's output is a JSON string holding JSON text: the string is the result.
        result: {
          exactly:
            '{\n  "query": "dataset page",\n  "matches": [\n    {"path": "/datasets/:datasetId/examples", "label": "Dataset Examples"}\n  ]\n}',
        },
      },
    },
    order: [
      [
        ['call-04'],
        ['call-05'],
        ['call-06'],
        ['call-07'],
        ['call-08'],
        ['call-09'],
        ['call-10'],
        ['call-11'],
      ],
    ],
  },
  {
    // call_subagent runs a second agent inside its span: that agent's calls are neither before
    // nor after it; three read_skill_resource calls come from one response (concurrent).
    file: 'openinference-phoenix-pxi/pxi-turn-subagent.otlp.json',
    traceId: '0fd55baf8ac90431c48b42c04ed4abe9',
    conversationId: 'fixture-subagent-session',
    runs: [
      {
        spanId: 'fb173a948cf4a99a',
        name: 'pxi.turn',
        turns: conversation([
          ['d2d6ee88baf619af', ['call-02']],
          ['e5e7f1971c3cd570', []],
        ]),
      },
      {
        spanId: 'd31f5b3c363e589d',
        name: 'ServerAgent.iter',
        parentSpanId: 'fb173a948cf4a99a',
        parentCall: 'call-02',
        turns: conversation([
          ['5e4f150aea3a7369', ['call-03']],
          ['3402f5cfe4ae2adf', ['call-04', 'call-05', 'call-06']],
          ['568db421693629b2', ['call-07']],
          ['1d7aaccdd2031472', ['call-08']],
          ['40ba25ddfe4dad6b', ['call-09']],
          ['b80f9ab9154962dc', ['call-10']],
          ['d1b56903519d59ee', ['call-11']],
          ['ec59dfc2f1a7cc0d', ['call-12']],
          ['10166c04ba9c4b64', ['call-13']],
          ['1082e1f98805fd17', ['call-14']],
          ['34caa08d10f6242e', ['call-15']],
          ['f69b7cff7c8477db', ['call-16']],
          ['62760e02e295d95c', ['call-17']],
          ['c7c8cc34db8a0f1d', ['call-18']],
          ['9c4e93a7858eabe5', ['call-19']],
          ['c778f9fc27778af0', []],
        ]),
      },
    ],
    calls: {
      // Every payload of this fixture was replaced by `{}`; text/plain outputs stay the text "{}".
      'call-02': {
        tool: 'call_subagent',
        args: {},
        outcome: ok,
        result: { exactly: '{}' },
        agent: 'pxi.turn',
      },
      'call-03': {
        tool: 'load_skill',
        args: {},
        outcome: ok,
        result: { exactly: '{}' },
        agent: 'ServerAgent.iter',
      },
      ...Object.fromEntries(
        ['call-04', 'call-05', 'call-06'].map((id) => [
          id,
          {
            tool: 'read_skill_resource',
            args: {},
            outcome: ok,
            result: { exactly: '{}' },
            agent: 'ServerAgent.iter',
          },
        ]),
      ),
      ...Object.fromEntries(
        Array.from({ length: 13 }, (_, k) => [
          `call-${String(k + 7).padStart(2, '0')}`,
          { tool: 'bash', args: {}, outcome: ok, result: { exactly: {} }, agent: 'ServerAgent.iter' },
        ]),
      ),
    },
    order: [
      [
        ['call-03'],
        ['call-04', 'call-05', 'call-06'],
        ...Array.from({ length: 13 }, (_, k) => [`call-${String(k + 7).padStart(2, '0')}`]),
      ],
    ],
  },
];

/** Every corpus trace read by the shared conventions, each as its raw spans say. */
export const TRACES: ExpectedTrace[] = [
  ...FIRST_TRACES,
  ...ANY_AGENT_TRACES,
  ...SMOLTRACE_TRACES,
  ...AGENT_PRISM_TRACES,
  ...VERCEL_LANGFUSE_TRACES,
  ...AGNTCY_TRACES,
];

/**
 * The three OpenAI Agents SDK traces logfire records (read by their own normalizer), and the
 * spans of their tool activity: `Function: …` and `Handoff: …`.
 */
export const LOGFIRE_AGENTS: [file: string, toolSpans: string[]][] = [
  ['openai-agents-logfire/function-tool-exception.otlp.json', ['000000000000000b']],
  ['openai-agents-logfire/mcp-random-number.otlp.json', ['0000000000000013']],
  ['openai-agents-logfire/responses-tool-then-handoff.otlp.json', ['000000000000000b', '000000000000000d']],
];
