/** The shared real-world trace corpus, read where it is (`../shared/corpus/realworld/` from the repo root). */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readStoredTraces } from '../../src/io/read-traces.js';
import type { SpanRecord } from '../../src/model/span-record.js';

const CORPUS = new URL('../../../shared/corpus/realworld/', import.meta.url);

/** Every trace file of the corpus, as paths relative to it. */
export const CORPUS_FILES = [
  'adk-python-kagent/helm-list-releases.otlp.json',
  'adk-python-kagent/helm-list-releases-json.otlp.json',
  'adk-python-kagent/k8s-no-tool.otlp.json',
  'adk-python-kagent/tempo-helm-list-releases.otlp.json',
  'claude-agent-sdk-logfire/bash-ls.otlp.json',
  'crewai-agentops/acp-songwriter-crew.otlp.json',
  'openai-agents-logfire/function-tool-exception.otlp.json',
  'openai-agents-logfire/mcp-random-number.otlp.json',
  'openai-agents-logfire/responses-tool-then-handoff.otlp.json',
  'openinference-phoenix-pxi/pxi-turn.otlp.json',
  'openinference-phoenix-pxi/pxi-turn-subagent.otlp.json',
  'pydantic-ai-mcp-logfire/joker-mcp-sampling.otlp.json',
  'strands-python/strands-1.14-get-user-location.otlp.json',
] as const;

/** The file's path on disk. */
export function corpusPath(path: string): string {
  return fileURLToPath(new URL(path, CORPUS));
}

/** The spans of one corpus file; throws when the file does not read cleanly. */
export function corpusSpans(path: string): SpanRecord[] {
  const read = readStoredTraces(readFileSync(new URL(path, CORPUS), 'utf8'), path);
  if (read.input?.format !== 'otlp-json' || read.errors.length > 0)
    throw new Error(`${path}: ${JSON.stringify(read.errors)}`);
  return read.input.spans;
}
