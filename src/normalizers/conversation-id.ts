/**
 * Which conversation a trace belongs to: the id its outermost agent run carries under a
 * convention's conversation key (`gen_ai.conversation.id`, OpenInference `session.id`, ...), or
 * under a key a convention reads on its own spans only (the Agents SDK's `group_id`).
 * Traces carrying the same id are judged together by conversation scenarios. Other ids in the
 * trace (a sub-agent's own conversation) are ignored and said so; an id that is not a string or
 * is too long is refused, and the trace is then judged on its own.
 */
import type { AttributeValue, SpanRecord } from '../model/span-record.js';
import type { TrajectoryIssue } from '../model/trajectory.js';
import type { Convention, OwnConversationKey, SpanReading } from './convention.js';
import type { SpanTree } from './span-tree.js';

/** Longer ids are refused: an id is a key held per conversation, not a payload. */
export const MAX_CONVERSATION_ID_LENGTH = 256;

/** What a trace says about its conversation. */
export interface ConversationReading {
  /** Undefined when the trace carries no usable id: it is then judged on its own. */
  id: string | undefined;
  /** The ids ignored or refused, as warnings for the trajectory. */
  issues: TrajectoryIssue[];
}

/** The conversation keys of a list of conventions. */
interface KeySet {
  /** Read on every span, in precedence order, each once. */
  everywhere: readonly string[];
  /** The same keys as a set: a span's own few keys are looked up in it before the keys are read in order. */
  everywhereSet: ReadonlySet<string>;
  /** Read on the spans of the convention so named only; undefined when no convention has any. */
  own: ReadonlyMap<string, readonly OwnConversationKey[]> | undefined;
}

/** Built once per list of conventions (lists are not changed once in use). */
const keySets = new WeakMap<readonly Convention[], KeySet>();

function keySetOf(conventions: readonly Convention[]): KeySet {
  let keys = keySets.get(conventions);
  if (!keys) {
    const own = new Map<string, readonly OwnConversationKey[]>();
    for (const convention of conventions)
      if (convention.ownConversationKeys?.length) own.set(convention.name, convention.ownConversationKeys);
    const everywhereSet = new Set(conventions.flatMap((convention) => convention.conversationKeys ?? []));
    keys = { everywhere: [...everywhereSet], everywhereSet, own: own.size > 0 ? own : undefined };
    keySets.set(conventions, keys);
  }
  return keys;
}

/** The conventions' own conversation keys by convention name; undefined when none has any. */
export function ownConversationKeys(
  conventions: readonly Convention[],
): ReadonlyMap<string, readonly OwnConversationKey[]> | undefined {
  return keySetOf(conventions).own;
}

/** Per span, by position, the own conversation keys of the convention that claimed it. */
export type OwnKeysOfSpan = (readonly OwnConversationKey[] | undefined)[];

/**
 * Notes which of `own` ({@link ownConversationKeys}) apply to span `index`, which `reading`
 * claimed. The list is made at the first such span: most traces have none, and then this costs
 * one map lookup per claimed span.
 */
export function noteOwnKeys(
  noted: OwnKeysOfSpan | undefined,
  own: ReadonlyMap<string, readonly OwnConversationKey[]>,
  index: number,
  reading: SpanReading,
  spanCount: number,
): OwnKeysOfSpan | undefined {
  const keys = own.get(conventionOf(reading));
  if (!keys) return noted;
  const list = noted ?? new Array(spanCount).fill(undefined);
  list[index] = keys;
  return list;
}

function conventionOf(reading: SpanReading): string {
  return reading.kind === 'tool'
    ? reading.call.convention
    : reading.kind === 'turn'
      ? reading.turn.convention
      : reading.convention;
}

/** One conversation key found on a span. */
interface Found {
  span: number;
  key: string;
  value: AttributeValue;
}

/**
 * The trace's conversation id: on the outermost agent span that carries one, else on the
 * outermost span that does (ties: the first in the trace). `isAgent` says which spans are agent
 * runs; `ownKeys` (from {@link noteOwnKeys}) which spans have own keys read on them. Linear in
 * spans: depths are worked out once for all.
 */
export function readConversationId(
  tree: SpanTree,
  isAgent: (span: number) => boolean,
  conventions: readonly Convention[],
  ownKeys?: OwnKeysOfSpan,
): ConversationReading {
  const keySet = keySetOf(conventions);
  const keys = keySet.everywhere;
  if (keys.length === 0 && !ownKeys) return { id: undefined, issues: [] };
  // Most traces carry one id, on one span or on every span: it is the id, whichever span is outermost.
  const sole = soleValue(tree, keySet, ownKeys);
  if (sole === NONE) return { id: undefined, issues: [] };
  if (sole !== MIXED && typeof sole === 'string' && refusal(sole) === undefined)
    return { id: sole, issues: [] };
  const found: Found[] = [];
  eachFound(tree, keySet, ownKeys, (span, key, value) => found.push({ span, key, value }));
  if (found.length === 0) return { id: undefined, issues: [] };
  const depth = depths(tree);
  let chosen: Found | undefined;
  for (const agentsOnly of [true, false]) {
    for (const candidate of found) {
      if (agentsOnly && !isAgent(candidate.span)) continue;
      if (!chosen || (depth[candidate.span] as number) < (depth[chosen.span] as number)) chosen = candidate;
    }
    if (chosen) break;
  }
  const first = chosen as Found;
  const issues: TrajectoryIssue[] = [];
  const where = `span ${(tree.spans[first.span] as SpanRecord).spanId}`;
  const refused = refusal(first.value);
  if (refused) {
    issues.push({
      kind: 'conversation.invalid_id',
      message: `${where}: ${first.key} ${refused}, so the trace is judged on its own, not as part of a conversation`,
      spanIds: [(tree.spans[first.span] as SpanRecord).spanId],
    });
    return { id: undefined, issues };
  }
  const id = first.value as string;
  const others = new Map<string, string[]>();
  for (const candidate of found) {
    if (candidate.value === id) continue;
    const text = typeof candidate.value === 'string' ? candidate.value : JSON.stringify(candidate.value);
    const spans = others.get(text) ?? [];
    spans.push((tree.spans[candidate.span] as SpanRecord).spanId);
    others.set(text, spans);
  }
  if (others.size > 0) {
    const listed = [...others.keys()].slice(0, 5).map((other) => JSON.stringify(shorten(other)));
    const more = others.size > 5 ? ` and ${others.size - 5} more` : '';
    issues.push({
      kind: 'conversation.other_ids',
      message: `the trace belongs to conversation ${JSON.stringify(shorten(id))} (${first.key} on its outermost ${isAgent(first.span) ? 'agent run' : 'span carrying one'}, ${where}); other conversation ids in it were ignored: ${listed.join(', ')}${more}`,
      spanIds: [...others.values()].flat().slice(0, 20),
    });
  }
  return { id, issues };
}

const NONE = Symbol('no conversation id');
const MIXED = Symbol('several conversation ids');

/** The one value the spans carry under conversation keys; NONE when none does, MIXED when they differ. */
function soleValue(
  tree: SpanTree,
  keys: KeySet,
  ownKeys: OwnKeysOfSpan | undefined,
): AttributeValue | typeof NONE | typeof MIXED {
  let sole: AttributeValue | typeof NONE | typeof MIXED = NONE;
  eachFound(tree, keys, ownKeys, (_span, _key, value) => {
    if (sole === NONE) sole = value;
    else if (sole !== value) sole = MIXED;
  });
  return sole;
}

/** Whether the attributes hold any of the keys: a span has a few keys, and most spans none of these. */
function holdsAny(attributes: SpanRecord['attributes'], keys: ReadonlySet<string>): boolean {
  for (const key in attributes) if (keys.has(key)) return true;
  return false;
}

/** Calls `visit` with each conversation key found on a span, spans in trace order, keys in precedence order. */
function eachFound(
  tree: SpanTree,
  { everywhere, everywhereSet }: KeySet,
  ownKeys: OwnKeysOfSpan | undefined,
  visit: (span: number, key: string, value: AttributeValue) => void,
): void {
  for (let i = 0; i < tree.spans.length; i++) {
    const attributes = (tree.spans[i] as SpanRecord).attributes;
    if (everywhere.length > 0 && holdsAny(attributes, everywhereSet)) {
      for (const key of everywhere) {
        const value = attributes[key];
        if (value !== undefined && value !== null && value !== '') visit(i, key, value);
      }
    }
    const own = ownKeys?.[i];
    if (!own) continue;
    for (const { key, none } of own) {
      const value = attributes[key];
      if (value === undefined || value === null || value === '') continue;
      if (typeof value === 'string' && none?.includes(value)) continue;
      visit(i, key, value);
    }
  }
}

/** Why a value cannot be a conversation id, or undefined when it can. */
function refusal(value: AttributeValue): string | undefined {
  if (typeof value !== 'string') {
    const kind = Array.isArray(value)
      ? 'an array'
      : value instanceof Uint8Array
        ? 'bytes'
        : `a ${typeof value}`;
    return `is ${kind} (${shorten(JSON.stringify(value) ?? String(value))}), not a string`;
  }
  if (value.length > MAX_CONVERSATION_ID_LENGTH)
    return `is ${value.length} characters long, over the ${MAX_CONVERSATION_ID_LENGTH} a conversation id may have`;
  return undefined;
}

function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Every span's depth, each worked out once (a walk up stops at an ancestor already known). */
function depths(tree: SpanTree): Int32Array {
  const n = tree.spans.length;
  const depth = new Int32Array(n).fill(-1);
  const path: number[] = [];
  for (let i = 0; i < n; i++) {
    if (depth[i] !== -1) continue;
    let current = i;
    // -2 marks a span on the current walk: meeting it again is a cycle of parent ids.
    while (current !== -1 && depth[current] === -1) {
      depth[current] = -2;
      path.push(current);
      current = tree.parent(current);
    }
    let base = current === -1 || depth[current] === -2 ? -1 : (depth[current] as number);
    for (let k = path.length - 1; k >= 0; k--) depth[path[k] as number] = ++base;
    path.length = 0;
  }
  return depth;
}
