/**
 * The conventions toolpath reads, in detection precedence: the first that claims a span reads
 * it. Vendor conventions come before OTel GenAI because several vendors also set some
 * `gen_ai.*` keys on spans whose real content is under their own keys.
 */
import type { SpanRecord } from '../model/span-record.js';
import type { Convention, SpanReading } from './convention.js';
import { googleAdk } from './google-adk.js';
import { mastra } from './mastra.js';
import { otelGenAi } from './otel-genai.js';
import { pydanticAi } from './pydantic-ai.js';
import { strands } from './strands.js';
import { vercelAi } from './vercel-ai.js';

/** Every convention, highest precedence first. */
export const CONVENTIONS: readonly Convention[] = [
  googleAdk,
  mastra,
  strands,
  pydanticAi,
  vercelAi,
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
