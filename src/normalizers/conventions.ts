/**
 * The conventions toolpath reads, in detection precedence: the first that claims a span reads
 * it. Vendor conventions come before OTel GenAI because several vendors also set some
 * `gen_ai.*` keys on spans whose real content is under their own keys.
 */
import type { SpanRecord } from '../model/span-record.js';
import type { Convention, SpanReading } from './convention.js';
import { googleAdk } from './google-adk.js';
import { langfuse } from './langfuse.js';
import { langsmith } from './langsmith.js';
import { mastra } from './mastra.js';
import { openInference } from './openinference.js';
import { openllmetry } from './openllmetry.js';
import { otelGenAi } from './otel-genai.js';
import { pydanticAi } from './pydantic-ai.js';
import { strands } from './strands.js';
import { vercelAi } from './vercel-ai.js';

/** Every convention, highest precedence first. */
export const CONVENTIONS: readonly Convention[] = [
  // Vendor keys that say outright what a span is, in the order Langfuse's own ingestion uses.
  langfuse,
  openInference,
  // Traceloop rewrites Vercel AI SDK spans (moves ai.toolCall.args to its own keys): before vercelAi.
  openllmetry,
  langsmith,
  // Frameworks that also set some gen_ai.* keys but keep the content under their own.
  googleAdk,
  mastra,
  strands,
  pydanticAi,
  vercelAi,
  // The OTel GenAI conventions and MCP tools/call spans: what everything else falls back to.
  otelGenAi,
];

/** The first reading any convention makes of this span. */
export function readSpan(
  span: SpanRecord,
  conventions: readonly Convention[] = CONVENTIONS,
): SpanReading | undefined {
  for (const convention of conventions) {
    const reading = convention.read(span);
    if (reading) return reading;
  }
  return undefined;
}
