import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { distinctTools, toolSet } from '../../src/evaluate/tool-set.js';

const tools = fc.array(fc.constantFrom<string>('a', 'b', 'c', 'constructor', '__proto__', ''), {
  maxLength: 20,
});

describe('toolSet', () => {
  it('answers as a Set of the list does, short or long', () => {
    fc.assert(
      fc.property(tools, fc.constantFrom('a', 'b', 'c', 'd', 'constructor', 'toString', ''), (list, tool) => {
        expect(toolSet(list).has(tool)).toBe(new Set(list).has(tool));
      }),
    );
  });
});

describe('distinctTools', () => {
  it('lists each tool once, in the order of its first listing, as a Set iterates', () => {
    fc.assert(
      fc.property(tools, (list) => {
        expect(distinctTools(list)).toEqual([...new Set(list)]);
      }),
    );
  });

  it('gives back the list itself when nothing repeats', () => {
    const list = ['a', 'b', 'c'];
    expect(distinctTools(list)).toBe(list);
  });
});
