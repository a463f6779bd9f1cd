/**
 * What the traces of `smolagents-openinference-smoltrace/` in the real-world corpus must read as,
 * written from their raw spans. smolagents' ToolCallingAgent through OpenInference: a TOOL span's
 * `input.value` is `{"args": [], "sanitize_inputs_outputs": true, "kwargs": {...}}` and the
 * arguments are the kwargs (the next generation's history repeats them: "Calling tools: [{'id':
 * ..., 'function': {'name': ..., 'arguments': {...}}}]"). The LLM spans record no output tool call
 * (only `llm.output_messages.0.message.role`): the model's call ids exist only in that Python-repr
 * history text, and the last call of a run has none, so calls are keyed by their tool span. Each
 * generation issues the tool span that follows it under the same parent (smolagents runs one step:
 * generate, then execute). `final_answer` records no `output.value`.
 *
 * The streaming run: its `ToolCallingAgent.run` span ends the instant it starts (it returns a
 * generator) and its LLM and TOOL spans are children of `test_evaluation`, not of it. Time says
 * they ran while that generator was consumed (they start at its start and end before the second
 * run's span starts), but no span encloses them, so they stay where the spans put them: in the
 * trace's own run (span id ''), not in the streaming run.
 */
import type { ExpectedTrace } from './corpus-reading-types.js';
import { conversation, ok } from './corpus-reading-types.js';

const AGENT = 'ToolCallingAgent.run';
const SEARCH_TEXT = [
  '## Search Results',
  '[Machine learning](https://en.wikipedia.org/wiki/Machine_learning)',
];
/** The two runs' answers differ in the spaces after full stops. */
const STREAMED_ANSWER =
  'Machine learning (ML) is a field of study in artificial intelligence concerned with the development and study of statistical algorithms that can learn from data and generalise to unseen data, and thus perform tasks without explicit instructions. Within a subdiscipline in machine learning, advances in the field of deep learning have allowed neural networks, a class of statistical algorithms, to surpass many previous machine learning approaches in performance.ML finds application in many fields, including natural language processing, computer vision, speech recognition, email filtering, agriculture, and medicine. The application of ML to business problems is known as predictive analytics.Statistics and mathematical optimisation (mathematical programming) methods comprise the foundations of machine learning. Data mining is a related field of study, focusing on exploratory data analysis (EDA) via unsupervised learning.From a theoretical viewpoint, probably approximately correct learning provides a mathematical and statistical framework for describing machine learning. Most traditional machine learning and deep learning algorithms can be described as empirical risk minimization under this framework.';
const ANSWER =
  'Machine learning (ML) is a field of study in artificial intelligence concerned with the development and study of statistical algorithms that can learn from data and generalise to unseen data, and thus perform tasks without explicit instructions. Within a subdiscipline in machine learning, advances in the field of deep learning have allowed neural networks, a class of statistical algorithms, to surpass many previous machine learning approaches in performance. ML finds application in many fields, including natural language processing, computer vision, speech recognition, email filtering, agriculture, and medicine. The application of ML to business problems is known as predictive analytics. Statistics and mathematical optimisation (mathematical programming) methods comprise the foundations of machine learning. Data mining is a related field of study, focusing on exploratory data analysis (EDA) via unsupervised learning. From a theoretical viewpoint, probably approximately correct learning provides a mathematical and statistical framework for describing machine learning. Most traditional machine learning and deep learning algorithms can be described as empirical risk minimization under this framework.';

export const SMOLTRACE_TRACES: ExpectedTrace[] = [
  {
    // The second (non-streaming) run fails on its first generation: litellm RateLimitError.
    file: 'smolagents-openinference-smoltrace/weather-paris-then-rate-limit.otlp.json',
    traceId: 'ea1ec9a60010cd7896363beb81a3752d',
    runs: [
      {
        spanId: '',
        turns: conversation([
          ['9829011d0f2f4a95', ['span:2990e63661e0805a']],
          ['f9c67a4504d280fa', ['span:4c99bd269e0c2136']],
        ]),
      },
      { spanId: '912fb7e84e5776f5', name: AGENT, turns: conversation([['07365973ca79f436', []]]) },
    ],
    calls: {
      'span:2990e63661e0805a': {
        tool: 'get_weather',
        noCallId: true,
        args: { location: 'Paris, France' },
        outcome: ok,
        result: { exactly: '20°C, Partly Cloudy' },
      },
      'span:4c99bd269e0c2136': {
        tool: 'final_answer',
        noCallId: true,
        args: { answer: '20°C, Partly Cloudy' },
        outcome: ok,
        result: { none: true },
      },
    },
    order: [[['span:2990e63661e0805a'], ['span:4c99bd269e0c2136']]],
  },
  {
    file: 'smolagents-openinference-smoltrace/time-utc-two-runs.otlp.json',
    traceId: 'c0dea9a8ab67b892b9e671f73c6770f7',
    runs: [
      {
        spanId: '',
        turns: conversation([
          ['e272ddc470f68cc7', ['span:c8ebe0ca2b5f0787']],
          ['d0323399885fc1c0', ['span:158080e9891204a3']],
        ]),
      },
      {
        spanId: '24e32a79880840e8',
        name: AGENT,
        turns: conversation([
          ['f926f7530bfb0ba3', ['span:1dde5ef84d31d33e']],
          ['6b9c7658093054fd', ['span:0c3f09ffa149a774']],
        ]),
      },
    ],
    calls: {
      'span:c8ebe0ca2b5f0787': {
        tool: 'get_current_time',
        noCallId: true,
        args: {},
        outcome: ok,
        result: { exactly: 'Current time in UTC: 2025-10-22 20:54:22' },
      },
      'span:158080e9891204a3': {
        tool: 'final_answer',
        noCallId: true,
        args: { answer: '2025-10-22 20:54:22' },
        outcome: ok,
        result: { none: true },
      },
      'span:1dde5ef84d31d33e': {
        tool: 'get_current_time',
        noCallId: true,
        args: {},
        outcome: ok,
        result: { exactly: 'Current time in UTC: 2025-10-22 20:54:23' },
        agent: AGENT,
      },
      'span:0c3f09ffa149a774': {
        tool: 'final_answer',
        noCallId: true,
        args: { answer: 'Current time in UTC: 2025-10-22 20:54:23' },
        outcome: ok,
        result: { none: true },
        agent: AGENT,
      },
    },
    // One run after the other: the second starts after the first's final answer ended.
    order: [
      [
        ['span:c8ebe0ca2b5f0787'],
        ['span:158080e9891204a3'],
        ['span:1dde5ef84d31d33e'],
        ['span:0c3f09ffa149a774'],
      ],
    ],
  },
  {
    file: 'smolagents-openinference-smoltrace/web-search-two-runs.otlp.json',
    traceId: '3ffc77338ebe9c58ee9bb3cce65015d9',
    runs: [
      {
        spanId: '',
        turns: conversation([
          ['dbdd4b746ace2f33', ['span:41b0f01d61b380f4']],
          ['4cf9d5f450b7a971', ['span:48e77e7427e7d9e1']],
        ]),
      },
      {
        spanId: '5abd08e6572f7897',
        name: AGENT,
        turns: conversation([
          ['d5f505b3776ba701', ['span:d6cb20931859002c']],
          ['2cdc5ae4c43368da', ['span:8bc73ee47bdbbe2a']],
        ]),
      },
    ],
    calls: {
      'span:41b0f01d61b380f4': {
        tool: 'web_search',
        noCallId: true,
        args: { query: 'machine learning' },
        outcome: ok,
        result: { containing: SEARCH_TEXT },
      },
      'span:48e77e7427e7d9e1': {
        tool: 'final_answer',
        noCallId: true,
        args: { answer: STREAMED_ANSWER },
        outcome: ok,
        result: { none: true },
      },
      'span:d6cb20931859002c': {
        tool: 'web_search',
        noCallId: true,
        args: { query: 'machine learning' },
        outcome: ok,
        result: { containing: SEARCH_TEXT },
        agent: AGENT,
      },
      'span:8bc73ee47bdbbe2a': {
        tool: 'final_answer',
        noCallId: true,
        args: { answer: ANSWER },
        outcome: ok,
        result: { none: true },
        agent: AGENT,
      },
    },
    order: [
      [
        ['span:41b0f01d61b380f4'],
        ['span:48e77e7427e7d9e1'],
        ['span:d6cb20931859002c'],
        ['span:8bc73ee47bdbbe2a'],
      ],
    ],
  },
];
