/**
 * Membership in a scenario's list of tools, made per evaluation (a parsed scenario is a plain
 * object its owner may still change, so nothing is cached by it). A short list is searched as
 * it is: building a Set costs more than the few comparisons it would save.
 */

/** What a rule asks of a tool list. */
export interface ToolSet {
  has(tool: string): boolean;
}

/** Lists up to this long are searched in place. */
const SHORT_LIST = 8;

class ShortList implements ToolSet {
  constructor(private readonly tools: readonly string[]) {}

  has(tool: string): boolean {
    return this.tools.includes(tool);
  }
}

/** `tools` as a membership test (a Set's semantics: SameValueZero). */
export function toolSet(tools: readonly string[]): ToolSet {
  return tools.length <= SHORT_LIST ? new ShortList(tools) : new Set(tools);
}

/** `tools` without repeats, in the order of their first listing: the list itself when it has none. */
export function distinctTools(tools: readonly string[]): readonly string[] {
  if (tools.length > SHORT_LIST) return [...new Set(tools)];
  for (let index = 1; index < tools.length; index++) {
    if (tools.lastIndexOf(tools[index] as string, index - 1) !== -1) return [...new Set(tools)];
  }
  return tools;
}
