/**
 * Every convention that records what the model wrote gives each turn that text as its answer
 * (`Turn.answer`, shown by `toolpath view`), and a turn that only asked for tools none. The text
 * expected is read here straight from the attribute the convention records it in, on the turn's
 * own span, in real captures and recordings: the test does not go through the normalizer's reading.
 */
import { describe, expect, it } from 'vitest';
import type { Attributes, SpanRecord } from '../../src/model/span-record.js';
import type { Trajectory, Turn } from '../../src/model/trajectory.js';
import { MAX_ANSWER_CHARS } from '../../src/normalizers/answer-text.js';
import { CORPUS_NOTE, corpusSource, corpusSpans, itCorpus, withCorpusRows } from '../helpers/corpus.js';
import { fixture, trajectoryOf } from '../helpers/fixtures.js';
import { spanRecord } from '../helpers/spans.js';

// Shapes of the recorded payloads, as far as these tests read them.
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Part = { type?: string; content?: string; text?: string };

function text(attributes: Attributes, key: string): string | undefined {
  const value = attributes[key];
  return typeof value === 'string' ? value : undefined;
}

function json(attributes: Attributes, key: string): Json | undefined {
  const value = text(attributes, key);
  return value === undefined ? undefined : (JSON.parse(value) as Json);
}

/** `gen_ai.output.messages` (OTel GenAI, pydantic-ai 2+, Strands' latest layouts): the text part. */
function genAiText(attributes: Attributes | undefined): string | undefined {
  const messages =
    attributes && (json(attributes, 'gen_ai.output.messages') as { parts: Part[] }[] | undefined);
  return messages?.flatMap((message) => message.parts).find((part) => part.type === 'text')?.content;
}

/** Where each convention records the text its turn span wrote, read without the normalizer. */
const RECORDED: Record<string, (span: SpanRecord) => string | undefined> = {
  'vercel-ai': (span) => text(span.attributes, 'ai.response.text'),
  openinference: (span) => {
    const flattened =
      text(span.attributes, 'llm.output_messages.0.message.content') ??
      text(span.attributes, 'llm.output_messages.0.message.contents.0.message_content.text');
    if (flattened !== undefined) return flattened;
    // The `@openai/agents` bridge writes only the role there; its Responses items are in output.value.
    const items = json(span.attributes, 'output.value');
    if (!Array.isArray(items)) return undefined;
    const message = (items as { type: string; content: Part[] }[]).find((item) => item.type === 'message');
    return message?.content.find((part) => part.type === 'output_text')?.text;
  },
  openllmetry: (span) => text(span.attributes, 'gen_ai.completion.0.content'),
  langfuse: (span) =>
    (json(span.attributes, 'langfuse.observation.output') as { content: string | null }).content ?? undefined,
  langsmith: (span) =>
    (json(span.attributes, 'gen_ai.completion') as { choices: { message: { content: string | null } }[] })
      .choices[0]?.message.content ?? undefined,
  'otel-genai': (span) => genAiText(span.attributes),
  'pydantic-ai': (span) => genAiText(span.attributes),
  'strands-attributes': (span) => genAiText(span.attributes),
  'strands-latest': (span) =>
    genAiText(span.events.find((event) => 'gen_ai.output.messages' in event.attributes)?.attributes),
  'strands-events': (span) => {
    const choice = span.events.find((event) => event.name === 'gen_ai.choice')?.attributes;
    return (choice && (json(choice, 'message') as Part[]))?.find((block) => 'text' in block)?.text;
  },
  'google-adk': (span) =>
    (
      json(span.attributes, 'gcp.vertex.agent.llm_response') as { content: { parts: Part[] } }
    ).content.parts.find((part) => 'text' in part)?.text,
  mastra: (span) => (json(span.attributes, 'mastra.model_step.output') as { text: string }).text,
  'logfire-responses': (span) => {
    // No `response` attribute in these exports: the output is the events after the input's.
    const last = (json(span.attributes, 'events') as { 'event.name': string; content?: Json }[]).at(-1);
    return last?.['event.name'] === 'gen_ai.assistant.message' && typeof last.content === 'string'
      ? last.content
      : undefined;
  },
  'logfire-chat': (span) =>
    (json(span.attributes, 'output') as { content: string | null }[])[0]?.content ?? undefined,
};

/** [what it is, where its spans come from, how its turn spans record their text]. */
const SOURCES: [string, () => SpanRecord[], keyof typeof RECORDED][] = [
  ['Vercel AI SDK v6 (experimental_telemetry)', () => fixture('vercel-ai-v6-refund'), 'vercel-ai'],
  [
    'Vercel AI SDK v7 (LegacyOpenTelemetry, "" on tool steps)',
    () => fixture('vercel-ai-v7-legacy-tool-error'),
    'vercel-ai',
  ],
  ['OpenInference, LangChain.js', () => fixture('openinference-langchain-refund'), 'openinference'],
  [
    'OpenInference, @openai/agents (Responses items in output.value)',
    () => fixture('openinference-openai-agents-refund'),
    'openinference',
  ],
  [
    'OpenInference, @openai/agents Responses model (text contents)',
    () => fixture('openinference-openai-agents-responses-refund'),
    'openinference',
  ],
  [
    'OpenInference, Phoenix PXI (text beside tool calls)',
    corpusSource('openinference-phoenix-pxi/pxi-turn.otlp.json'),
    'openinference',
  ],
  ['OpenLLMetry legacy completions', () => fixture('openllmetry-documented-refund'), 'openllmetry'],
  [
    'OpenLLMetry legacy completions, CrewAI via AgentOps',
    corpusSource('crewai-agentops/acp-songwriter-crew.otlp.json'),
    'openllmetry',
  ],
  ['Langfuse generations', () => fixture('langfuse-documented-refund'), 'langfuse'],
  ['LangSmith llm runs', () => fixture('langsmith-documented-refund'), 'langsmith'],
  ['pydantic-ai v3', () => fixture('pydantic-ai-documented-v3-refund'), 'pydantic-ai'],
  [
    'pydantic-ai with MCP sampling (logfire)',
    corpusSource('pydantic-ai-mcp-logfire/joker-mcp-sampling.otlp.json'),
    'pydantic-ai',
  ],
  ['Strands, events layout', () => fixture('strands-events-refund'), 'strands-events'],
  [
    'Strands Python 1.14, events layout',
    corpusSource('strands-python/strands-1.14-get-user-location.otlp.json'),
    'strands-events',
  ],
  ['Strands, latest layout (details events)', () => fixture('strands-latest-refund'), 'strands-latest'],
  [
    'Strands, latest layout (attributes)',
    () => fixture('strands-latest-attributes-refund'),
    'strands-attributes',
  ],
  ['Google ADK JS', () => fixture('google-adk-refund'), 'google-adk'],
  [
    'Google ADK Python via kagent (OpenLLMetry inside)',
    corpusSource('adk-python-kagent/helm-list-releases.otlp.json'),
    'google-adk',
  ],
  ['Mastra model steps', () => fixture('mastra-refund'), 'mastra'],
  [
    'OpenAI Agents SDK via logfire, Responses',
    corpusSource('openai-agents-logfire/responses-tool-then-handoff.otlp.json'),
    'logfire-responses',
  ],
  [
    'OpenAI Agents SDK via logfire, hosted file search',
    () => fixture('logfire-openai-agents-file-search'),
    'logfire-responses',
  ],
  [
    'OpenAI Agents SDK via logfire, Chat Completions',
    () => fixture('logfire-openai-agents-chat-completion'),
    'logfire-chat',
  ],
  [
    'Claude Agent SDK via logfire (OTel GenAI, reasoning beside a tool call)',
    corpusSource('claude-agent-sdk-logfire/bash-ls.otlp.json'),
    'otel-genai',
  ],
];

/** Each turn with the text its span records (blank text is none). */
function turnsWithRecordedText(spans: SpanRecord[], recorded: (span: SpanRecord) => string | undefined) {
  const trajectory: Trajectory = trajectoryOf(spans);
  return trajectory.turns.map((turn: Turn) => {
    const span = spans.find((candidate) => candidate.spanId === turn.spanId);
    if (!span) throw new Error(`turn ${turn.id} has no span`);
    const text = recorded(span);
    return { turn, text: text?.trim() ? text : undefined };
  });
}

describe('a turn answers with the text its convention recorded', () => {
  it.each(withCorpusRows(SOURCES))('%s', (_, spans, convention) => {
    const turns = turnsWithRecordedText(
      spans(),
      RECORDED[convention] as (span: SpanRecord) => string | undefined,
    );
    expect(turns.length).toBeGreaterThan(0);
    for (const { turn, text } of turns) {
      // None of these texts is past the cut, tested on its own below.
      expect(text === undefined || text.length <= MAX_ANSWER_CHARS).toBe(true);
      expect({ turn: turn.id, answer: turn.answer }).toEqual({ turn: turn.id, answer: text });
    }
    // The trace's last turn wrote the answer the user saw.
    expect(turns.at(-1)?.turn.answer).toBeDefined();
  });

  it.each(
    withCorpusRows(SOURCES).filter(([name]) => !/Chat Completions|CrewAI|hosted file search/.test(name)),
  )('%s: a turn with only tool calls has no answer', (_, spans, convention) => {
    const turns = turnsWithRecordedText(
      spans(),
      RECORDED[convention] as (span: SpanRecord) => string | undefined,
    );
    const toolsOnly = turns.filter(({ turn, text }) => turn.issued.length > 0 && text === undefined);
    expect(toolsOnly.length).toBeGreaterThan(0);
    for (const { turn } of toolsOnly) expect(turn.answer).toBeUndefined();
  });

  itCorpus(
    `a turn that asked for tools and wrote text keeps its text (PXI, and a hosted file search)${CORPUS_NOTE}`,
    () => {
      for (const [spans, convention] of [
        [corpusSpans('openinference-phoenix-pxi/pxi-turn.otlp.json'), 'openinference'],
        [fixture('logfire-openai-agents-file-search'), 'logfire-responses'],
      ] as const) {
        const both = turnsWithRecordedText(
          spans,
          RECORDED[convention] as (span: SpanRecord) => string | undefined,
        ).filter(({ turn }) => turn.issued.length > 0 && turn.answer !== undefined);
        expect(both.length).toBeGreaterThan(0);
        for (const { turn, text } of both) expect(turn.answer).toBe(text);
      }
    },
  );
});

describe('what an answer keeps', () => {
  const long = `${'word '.repeat(1_000)}END`;

  /** One generation: a Vercel AI step or an OpenInference LLM span, writing `written`. */
  const generations: [string, (written: string) => SpanRecord][] = [
    [
      'Vercel AI SDK',
      (written) =>
        spanRecord({
          name: 'ai.generateText.doGenerate',
          attributes: { 'ai.operationId': 'ai.generateText.doGenerate', 'ai.response.text': written },
        }),
    ],
    [
      'OpenInference',
      (written) =>
        spanRecord({
          name: 'ChatModel',
          attributes: {
            'openinference.span.kind': 'LLM',
            'llm.output_messages.0.message.role': 'assistant',
            'llm.output_messages.0.message.content': written,
          },
        }),
    ],
    [
      'Langfuse',
      (written) =>
        spanRecord({
          name: 'chat',
          attributes: {
            'langfuse.observation.type': 'generation',
            'langfuse.observation.output': JSON.stringify({ role: 'assistant', content: written }),
          },
        }),
    ],
  ];

  it.each(generations)('%s: past 4,000 characters it is cut, the cut marked', (_, generation) => {
    const answer = trajectoryOf([generation(long)]).turns[0]?.answer;
    expect(answer).toBe(`${long.slice(0, MAX_ANSWER_CHARS)}…`);
  });

  it.each(generations)('%s: text that is only white space is no answer', (_, generation) => {
    expect(trajectoryOf([generation(' \n\t ')]).turns[0]?.answer).toBeUndefined();
  });

  it('Anthropic-style content blocks give their text, not their tool_use or thinking blocks', () => {
    const output = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The order is eligible.' },
        { type: 'text', text: 'Refunding now.' },
        { type: 'tool_use', id: 'toolu_1', name: 'issue_refund', input: { orderId: 'A1' } },
      ],
    };
    const span = spanRecord({
      name: 'anthropic.messages',
      attributes: {
        'langfuse.observation.type': 'generation',
        'langfuse.observation.output': JSON.stringify(output),
      },
    });
    const [turn] = trajectoryOf([span]).turns;
    expect(turn?.answer).toBe('Refunding now.');
    expect(turn?.issued).toHaveLength(1);
  });

  it('Gemini thought parts (ADK) are not the answer', () => {
    const response = {
      content: {
        role: 'model',
        parts: [{ text: 'Checking the order first.', thought: true }, { text: 'It shipped.' }],
      },
    };
    const span = spanRecord({
      name: 'call_llm',
      scope: { name: 'gcp.vertex.agent' },
      attributes: { 'gcp.vertex.agent.llm_response': JSON.stringify(response) },
    });
    expect(trajectoryOf([span]).turns[0]?.answer).toBe('It shipped.');
  });

  it('the OpenAI Agents SDK via logfire: a recorded response gives its message items, not its calls', () => {
    const response = {
      output: [
        { type: 'reasoning', id: 'rs_1', summary: [] },
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Looking it up.', annotations: [] }],
        },
        { type: 'function_call', call_id: 'call_1', name: 'get_order', arguments: '{"orderId":"A1"}' },
      ],
    };
    const span = spanRecord({
      name: 'Responses API with {gen_ai.request.model!r}',
      scope: { name: 'logfire.openai_agents' },
      attributes: {
        'logfire.msg_template': 'Responses API with {gen_ai.request.model!r}',
        response: JSON.stringify(response),
      },
    });
    const [turn] = trajectoryOf([span]).turns;
    expect(turn?.answer).toBe('Looking it up.');
    expect(turn?.issued).toHaveLength(1);
  });

  it('pydantic-ai version 1: the gen_ai.choice event body, text parts without the thinking ones', () => {
    const events = [
      {
        'event.name': 'gen_ai.user.message',
        content: 'Where is A1?',
        role: 'user',
        'gen_ai.message.index': 0,
      },
      {
        'event.name': 'gen_ai.choice',
        index: 0,
        message: {
          role: 'assistant',
          content: [
            { kind: 'thinking', text: 'Look it up.' },
            { kind: 'text', text: 'It shipped.' },
          ],
        },
      },
    ];
    const span = spanRecord({
      name: 'chat gpt-4o',
      scope: { name: 'pydantic-ai' },
      attributes: { 'gen_ai.operation.name': 'chat', events: JSON.stringify(events) },
    });
    expect(trajectoryOf([span]).turns[0]?.answer).toBe('It shipped.');
  });
});
