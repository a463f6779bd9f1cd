import { describe, expect, it } from 'vitest';
import {
  countsBetween,
  functionName,
  functionTable,
  groupOf,
  PerfMap,
  readCallgrind,
} from '../../bench/callgrind-functions.js';

const PERF_MAP = [
  '2000 200 JS:~stale file:///repo/src/old.ts:1:1',
  '3000 100 JS:^redact file:///repo/src/judging/redact.ts:10:1',
  '2000 200 JS:*judge file:///repo/src/judging/trace-judge.ts:99:3',
  'not a line of the map',
].join('\n');

// As callgrind writes it with --dump-instr=yes: name compression, relative and repeated
// positions, trailing zero costs left out, a call's inclusive cost after its calls= line.
const CALLGRIND = [
  'version: 1',
  'positions: instr line',
  'events: Ir I1mr',
  'ob=(1) /usr/bin/node',
  'fn=(1) Builtins_JsonParse',
  '0x100 0 10 1',
  '+4 0 5',
  'fn=(2) 0x0000000000002000',
  '0x2000 0 7 2',
  '+16 0 3',
  'cfn=(3) 0x0000000000003000',
  'calls=1 0x3000 0',
  '* 0 1000 50',
  'fn=(3)',
  '0x3000 0 20',
  'fn=(4) 0x0000000000009000',
  '0x9000 0 6 6',
  'fn=(2)',
  '0x2100 0 4',
  '-256 0 1',
].join('\n');

describe('callgrind counts by function', () => {
  it('names compiled code from the perf map, counts self costs, and skips what calls cost', () => {
    const { events, functions } = readCallgrind(CALLGRIND, new PerfMap(PERF_MAP), '/repo');
    expect(events).toEqual(['Ir', 'I1mr']);
    expect(Object.fromEntries(functions)).toEqual({
      Builtins_JsonParse: [15, 1],
      // 7 + 3 + 4 + 1: the call's 1000 belongs to the callee, counted where it ran.
      'judge src/judging/trace-judge.ts': [15, 2],
      'redact src/judging/redact.ts': [20, 0],
      '(unnamed code)': [6, 6],
    });
  });

  it('finds the latest code object holding an address, and none past its end', () => {
    const map = new PerfMap(PERF_MAP);
    expect(map.nameAt(0x2000)).toBe('JS:*judge file:///repo/src/judging/trace-judge.ts:99:3');
    expect(map.nameAt(0x21ff)).toBe('JS:*judge file:///repo/src/judging/trace-judge.ts:99:3');
    expect(map.nameAt(0x2200)).toBeUndefined();
    expect(map.nameAt(0x1fff)).toBeUndefined();
    expect(map.nameAt(0x3050)).toBe('JS:^redact file:///repo/src/judging/redact.ts:10:1');
  });

  it('drops the tier and the position, and keeps names that are not JavaScript as they are', () => {
    expect(functionName('JS:*judge file:///repo/src/judging/trace-judge.ts:99:3', '/repo')).toBe(
      'judge src/judging/trace-judge.ts',
    );
    expect(functionName('JS:^ file:///repo/src/a.ts:5:2', '/repo/')).toBe('(anonymous) src/a.ts');
    expect(functionName('JS:~get node:internal/url:123:4', '/repo')).toBe('get node:internal/url');
    expect(functionName('RegExp:^([0-9a-f]{32})$', '/repo')).toBe('RegExp:^([0-9a-f]{32})$');
    expect(functionName('Builtin:JsonParse', '/repo')).toBe('Builtin:JsonParse');
  });

  it('takes the counts between two runs per function, a function gone counted as less', () => {
    const earlier = {
      events: ['Ir', 'I1mr'],
      functions: new Map([
        ['a', [100, 10]],
        ['gone', [8, 4]],
      ]),
    };
    const later = {
      events: ['I1mr', 'Ir'],
      functions: new Map([
        ['a', [30, 400]],
        ['new', [2, 20]],
      ]),
    };
    expect(Object.fromEntries(countsBetween(earlier, later, 2).functions)).toEqual({
      a: [10, 150],
      new: [1, 10],
      gone: [-2, -4],
    });
  });

  it('sums functions into where their code comes from, and lists the costliest first', () => {
    expect(groupOf('judge src/judging/trace-judge.ts')).toBe("toolpath's code (src/)");
    expect(groupOf('v8::internal::JsonParser<unsigned char>::ParseJsonValue()')).toBe(
      "JSON.parse (V8's parser)",
    );
    expect(groupOf('Builtins_KeyedLoadIC_Megamorphic')).toBe(
      'the rest of V8 and node (builtins, runtime, GC)',
    );
    const lines = functionTable({
      events: ['Ir', 'Dr', 'I1mr'],
      functions: new Map([
        ['read src/a.ts:1', [1000, 9, 30]],
        ['link src/b.ts:2', [3000, 9, 10]],
        ['Builtin_JsonParse', [2000, 9, 50]],
      ]),
    });
    const group = (name: string) =>
      lines
        .find((line) => line.endsWith(name))
        ?.trim()
        .split(/\s+/)
        .slice(0, 2);
    expect(group("toolpath's code (src/)")).toEqual(['4.0k', '0.0k']);
    expect(group("JSON.parse (V8's parser)")).toEqual(['2.0k', '0.1k']);
    const byInstructions = lines.indexOf(lines.find((line) => line.includes('most instructions')) as string);
    const byMisses = lines.indexOf(
      lines.find((line) => line.includes('most L1 instruction misses')) as string,
    );
    expect(
      lines.slice(byInstructions + 2, byInstructions + 5).map((line) => line.trim().split(/\s+/).pop()),
    ).toEqual(['src/b.ts:2', 'Builtin_JsonParse', 'src/a.ts:1']);
    expect(lines[byMisses + 2]).toContain('Builtin_JsonParse');
  });
});
