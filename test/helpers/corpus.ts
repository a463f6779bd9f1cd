/** The shared real-world trace corpus, read where it is (`../shared/corpus/realworld/` from the repo root). */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { SpanRecord } from '../../src/model/span-record.js';

const CORPUS = new URL('../../../shared/corpus/realworld/', import.meta.url);
const SHARED_CORPUS = new URL('../../../shared/corpus/', import.meta.url);

/** Why the corpus tests are skipped here; undefined when ../shared/corpus is beside the checkout. */
export const CORPUS_MISSING: string | undefined = existsSync(SHARED_CORPUS)
  ? undefined
  : `skipped: the shared corpus is absent (no ${fileURLToPath(SHARED_CORPUS)} beside this checkout)`;

/** `describe` for tests that read the corpus: without it, one skipped test saying why instead. */
export function describeCorpus(name: string, body: () => void): void {
  if (CORPUS_MISSING === undefined) describe(name, body);
  else describe.skip(name, () => it(CORPUS_MISSING as string, () => undefined));
}

/** `describe.each` for tests that read the corpus: without it, one skipped test saying why instead. */
export const describeCorpusEach: typeof describe.each =
  CORPUS_MISSING === undefined
    ? describe.each.bind(describe)
    : ((() => (name: string) =>
        describe.skip(name, () =>
          it(CORPUS_MISSING as string, () => undefined),
        )) as unknown as typeof describe.each);

/** `it`, skipped without the corpus; give the test's name {@link CORPUS_NOTE} to say why. */
export const itCorpus: typeof it = CORPUS_MISSING === undefined ? it : (it.skip as unknown as typeof it);
export const CORPUS_NOTE = CORPUS_MISSING === undefined ? '' : ` (${CORPUS_MISSING})`;

const CORPUS_THUNKS = new WeakSet<() => SpanRecord[]>();

/** A corpus file's spans, read when called; such rows are left out of a table without the corpus ({@link withCorpusRows}). */
export function corpusSource(path: string): () => SpanRecord[] {
  const read = () => corpusSpans(path);
  CORPUS_THUNKS.add(read);
  return read;
}

/** A table's rows, without those read from the corpus when it is absent. */
export function withCorpusRows<T extends readonly unknown[]>(rows: readonly T[]): T[] {
  if (CORPUS_MISSING === undefined) return [...rows];
  return rows.filter(
    (row) => !row.some((cell) => typeof cell === 'function' && CORPUS_THUNKS.has(cell as never)),
  );
}

/** Every trace file of the corpus, as paths relative to it. */
export const CORPUS_FILES = [
  'adk-python-kagent/helm-list-releases-json.otlp.json',
  'adk-python-kagent/helm-list-releases.otlp.json',
  'adk-python-kagent/k8s-no-tool.otlp.json',
  'adk-python-kagent/tempo-helm-list-releases.otlp.json',
  'any-agent/agno-time-write-file.otlp.json',
  'any-agent/google-adk-time-write-file.otlp.json',
  'any-agent/langchain-time-write-file.otlp.json',
  'any-agent/llama-index-time-write-file.otlp.json',
  'claude-agent-sdk-logfire/bash-ls.otlp.json',
  'crewai-agentops/acp-songwriter-crew.otlp.json',
  'langgraph-agntcy-openllmetry/noc-get-inventory.otlp.json',
  'langgraph-agntcy-openllmetry/noc-interfaces-r1-status.otlp.json',
  'openai-agents-logfire/function-tool-exception.otlp.json',
  'openai-agents-logfire/mcp-random-number.otlp.json',
  'openai-agents-logfire/responses-tool-then-handoff.otlp.json',
  'openinference-agent-prism/langchain-agentexecutor-tavily.otlp.json',
  'openinference-agent-prism/langchain-rag-no-tool.otlp.json',
  'openinference-agent-prism/smolagents-deep-research-managed-agent.otlp.json',
  'openinference-phoenix-pxi/pxi-turn-subagent.otlp.json',
  'openinference-phoenix-pxi/pxi-turn.otlp.json',
  'pydantic-ai-mcp-logfire/joker-mcp-sampling.otlp.json',
  'smolagents-openinference-smoltrace/time-utc-two-runs.otlp.json',
  'smolagents-openinference-smoltrace/weather-paris-then-rate-limit.otlp.json',
  'smolagents-openinference-smoltrace/web-search-two-runs.otlp.json',
  'strands-python/strands-1.14-get-user-location.otlp.json',
  'vercel-ai-langfuse-export/docs-chatbot-no-tool.otlp.json',
  'vercel-ai-langfuse-export/docs-chatbot-search-dataset.otlp.json',
  'vercel-ai-langfuse-export/docs-chatbot-search-n-plus-1.otlp.json',
] as const;

/** The file's path on disk. */
export function corpusPath(path: string): string {
  return fileURLToPath(new URL(path, CORPUS));
}

/** The spans of one corpus file; throws when the file does not read cleanly. */
export function corpusSpans(path: string): SpanRecord[] {
  if (CORPUS_MISSING !== undefined) throw new Error(CORPUS_MISSING);
  const read = readStoredTraces(readFileSync(new URL(path, CORPUS), 'utf8'), path);
  if (read.input?.format !== 'otlp-json' || read.errors.length > 0)
    throw new Error(`${path}: ${JSON.stringify(read.errors)}`);
  return read.input.spans;
}
