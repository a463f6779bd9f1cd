/**
 * Code actions: agents that act by writing code (smolagents' CodeAgent) call their tools, and
 * the agents they manage, from Python in the model's output (`Code:` and a fenced block, or a
 * `<code>` block), not as structured tool calls; the results come back as `Observation:` text.
 * A call in such code naming a tool the agent has is a call toolpath reads from the code: its
 * tool, with the argument source as text (not JSON: no argument rule can be decided on it), and
 * no result. The turn says so as unread tool use too, as whether the code ran each call, how
 * often and with what, is not in the trace: no rule over the calls passes on it.
 *
 * The tools an agent has are the ones its turn lists (`llm.tools`) and the ones its prompt
 * declares as Python stubs (`def name(`), which is how a code agent is told of its tools.
 */
import type { RequestedCall } from './convention.js';

/** Why a code call's arguments are not compared: they are source text. */
export const CODE_ARGUMENTS = "Python code in the model's output, not JSON arguments";
/** The most code scanned per turn, and calls read from it: beyond, the rest is not read. */
const MAX_CODE_CHARS = 200_000;
const MAX_CALLS = 100;
/** The longest argument text kept per call. */
const MAX_ARGUMENT_CHARS = 2_000;

/** The closing fence starts a line (as smolagents reads it): a string holding ``` stays code. */
const FENCED = /```(?:py|python)?[ \t]*\r?\n((?:[\s\S]*?\n)?)[ \t]*```/g;
const TAGGED = /<code>([\s\S]*?)<\/code>/g;
const CODE_LABEL = /(^|\n)\s*Code:\s*(\r?\n|$)/;
const DECLARED = /\bdef ([A-Za-z_][A-Za-z0-9_]*)\(/g;

/** Whether the output text may hold a code action (a cheap test before any scanning). */
export function mayHoldCode(text: string): boolean {
  return text.includes('<code>') || (text.includes('```') && CODE_LABEL.test(text));
}

/** The names the texts declare as Python functions (`def name(`): a code agent's tool stubs. */
export function declaredFunctions(texts: Iterable<string>, into: Set<string> = new Set()): Set<string> {
  for (const text of texts) {
    if (!text.includes('def ')) continue;
    for (const match of text.matchAll(DECLARED)) into.add(match[1] as string);
  }
  return into;
}

/** What the code in one output calls of the agent's tools. */
export interface CodeActions {
  /** One request per call found, in the order the code has them. */
  requested: RequestedCall[];
  /** The evidence of tool use the calls stand for, in a few words; undefined when none. */
  unread: string | undefined;
}

/**
 * The calls of `tools` in the output's code blocks. A fenced block counts after a `Code:` label
 * (the CodeAgent's format); a `<code>` block always.
 */
export function codeActions(text: string, tools: ReadonlySet<string>): CodeActions {
  const requested: RequestedCall[] = [];
  if (tools.size === 0 || !mayHoldCode(text)) return { requested, unread: undefined };
  const blocks: string[] = [];
  for (const match of text.matchAll(TAGGED)) blocks.push(match[1] as string);
  if (CODE_LABEL.test(text)) for (const match of text.matchAll(FENCED)) blocks.push(match[1] as string);
  let budget = MAX_CODE_CHARS;
  for (const block of blocks) {
    const code = block.length > budget ? block.slice(0, budget) : block;
    budget -= code.length;
    for (const call of callsIn(code, tools)) {
      if (requested.length >= MAX_CALLS) break;
      requested.push({
        tool: call.tool,
        args: { captured: true, value: call.args, parseError: CODE_ARGUMENTS },
      });
    }
    if (budget <= 0) break;
  }
  if (requested.length === 0) return { requested, unread: undefined };
  const named = [...new Set(requested.map((request) => request.tool))].join(', ');
  return {
    requested,
    unread: `its output runs code calling ${named}: the calls are read from the code, not what they were given, returned, or whether they ran`,
  };
}

/** Each call `name(...)` of a tool in the code, outside strings and comments, with its argument text. */
function callsIn(code: string, tools: ReadonlySet<string>): { tool: string; args: string }[] {
  const calls: { tool: string; args: string }[] = [];
  let i = 0;
  let previousWord = '';
  while (i < code.length) {
    const c = code[i] as string;
    if (c === '#') {
      const end = code.indexOf('\n', i);
      i = end === -1 ? code.length : end;
    } else if (c === '"' || c === "'") {
      i = afterString(code, i);
    } else if (isWordStart(c) && (i === 0 || !isWordPart(code[i - 1] as string))) {
      let end = i + 1;
      while (end < code.length && isWordPart(code[end] as string)) end++;
      const word = code.slice(i, end);
      let open = end;
      while (code[open] === ' ' || code[open] === '\t') open++;
      const attribute = i > 0 && code[i - 1] === '.';
      if (code[open] === '(' && !attribute && previousWord !== 'def' && tools.has(word)) {
        const close = matchingParen(code, open);
        const args = code.slice(open + 1, close === -1 ? code.length : close).trim();
        calls.push({
          tool: word,
          args: args.length > MAX_ARGUMENT_CHARS ? `${args.slice(0, MAX_ARGUMENT_CHARS)}…` : args,
        });
      }
      previousWord = word;
      i = end;
    } else {
      if (c !== ' ' && c !== '\t') previousWord = '';
      i++;
    }
  }
  return calls;
}

/** The position right after the Python string literal starting at `start` (single or triple quoted). */
function afterString(code: string, start: number): number {
  const quote = code[start] as string;
  const triple = code.startsWith(quote.repeat(3), start);
  const closing = triple ? quote.repeat(3) : quote;
  let i = start + closing.length;
  while (i < code.length) {
    const c = code[i] as string;
    if (c === '\\') i += 2;
    else if (code.startsWith(closing, i)) return i + closing.length;
    else if (!triple && c === '\n') return i;
    else i++;
  }
  return code.length;
}

/** The position of the `)` closing the `(` at `open`, or -1; strings and comments skipped. */
function matchingParen(code: string, open: number): number {
  let depth = 0;
  let i = open;
  while (i < code.length) {
    const c = code[i] as string;
    if (c === '"' || c === "'") {
      i = afterString(code, i);
      continue;
    }
    if (c === '#') {
      const end = code.indexOf('\n', i);
      i = end === -1 ? code.length : end;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) return i;
    }
    i++;
  }
  return -1;
}

function isWordStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
}

function isWordPart(c: string): boolean {
  return isWordStart(c) || (c >= '0' && c <= '9');
}
