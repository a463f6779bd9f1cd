/**
 * The conventions toolpath reads, in detection precedence: the first that claims a span reads
 * it. Vendor conventions come before OTel GenAI because several vendors also set some
 * `gen_ai.*` keys on spans whose real content is under their own keys.
 */
import type { SpanRecord } from '../model/span-record.js';
import { anyAgent } from './any-agent.js';
import type { Convention, SpanReading } from './convention.js';
import { googleAdk } from './google-adk.js';
import { langfuse } from './langfuse.js';
import { langsmith } from './langsmith.js';
import { mastra } from './mastra.js';
import { openAiAgentsLogfire } from './openai-agents-logfire.js';
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
  // Frameworks that also set some gen_ai.* keys but keep the content under their own. logfire's
  // Agents SDK spans carry `agent_name`, which pydantic-ai's convention takes as its mark.
  openAiAgentsLogfire,
  googleAdk,
  mastra,
  strands,
  pydanticAi,
  vercelAi,
  // any-agent's call_llm/execute_tool keep their content under gen_ai.output / gen_ai.tool.args.
  anyAgent,
  // The OTel GenAI conventions and MCP tools/call spans: what everything else falls back to.
  otelGenAi,
];

/** The marks of several conventions together (see {@link Convention.marks}). */
interface MarkScreen {
  keys: Set<string>;
  scopes: Set<string>;
  namePrefixes: string[];
  /** Whether any convention declares marks: when none does, there is nothing to screen. */
  any: boolean;
  /** The conventions that declare no marks, in precedence: all a span bearing no mark is offered to. */
  unmarked: Convention[];
}

const screens = new WeakMap<readonly Convention[], MarkScreen>();
/** The list asked about last and its screen: every span of a trace is read through the same list. */
let lastConventions: readonly Convention[] | undefined;
let lastScreen: MarkScreen | undefined;

function screenOf(conventions: readonly Convention[]): MarkScreen {
  if (conventions === lastConventions && lastScreen) return lastScreen;
  let screen = screens.get(conventions);
  if (!screen) screen = newScreen(conventions);
  lastConventions = conventions;
  lastScreen = screen;
  return screen;
}

/** Built once per list of conventions (lists are not changed once in use). */
function newScreen(conventions: readonly Convention[]): MarkScreen {
  const screen: MarkScreen = {
    keys: new Set(),
    scopes: new Set(),
    namePrefixes: [],
    any: false,
    unmarked: [],
  };
  for (const convention of conventions) {
    const marks = convention.marks;
    if (!marks) {
      screen.unmarked.push(convention);
      continue;
    }
    screen.any = true;
    for (const key of marks.keys) screen.keys.add(key);
    for (const scope of marks.scopes ?? []) screen.scopes.add(scope);
    screen.namePrefixes.push(...(marks.namePrefixes ?? []));
  }
  screens.set(conventions, screen);
  return screen;
}

/**
 * Whether the span bears a mark of any convention. One pass over its keys with a set lookup
 * each: a tenth of asking each convention for its own keys in turn. Attributes are plain
 * records, so their keys are what for-in lists.
 */
function bearsMark(span: SpanRecord, screen: MarkScreen): boolean {
  if (screen.scopes.has(span.scope.name)) return true;
  for (const prefix of screen.namePrefixes) if (span.name.startsWith(prefix)) return true;
  for (const key in span.attributes) if (screen.keys.has(key)) return true;
  return false;
}

/**
 * The first reading any convention makes of this span. A list of conventions is screened by
 * its marks once, by identity: pass a new array rather than changing one already in use.
 */
export function readSpan(
  span: SpanRecord,
  conventions: readonly Convention[] = CONVENTIONS,
): SpanReading | undefined {
  const screen = screenOf(conventions);
  const offered = !screen.any || bearsMark(span, screen) ? conventions : screen.unmarked;
  for (const convention of offered) {
    const reading = convention.read(span);
    if (reading) return reading;
  }
  return undefined;
}
