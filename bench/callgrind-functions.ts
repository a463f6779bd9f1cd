/**
 * Callgrind's counts by function, V8's compiled JavaScript included. Callgrind names native code
 * by its symbols (node's binary holds V8's builtins and runtime) but knows nothing of the code V8
 * compiles as it runs, which it can only name by address; V8's `--perf-basic-prof` map
 * (`/tmp/perf-PID.map`, a line per code object: start, size, name) names that. Read from a
 * callgrind file written with `--dump-instr=yes`, so each cost line carries its instruction's
 * address. Self costs only: the cost line after a `calls=` line is that call's inclusive cost.
 */
import { readFileSync } from 'node:fs';

/** Per function name, its self count of each event, in the file's order of events. */
export interface FunctionCounts {
  events: string[];
  functions: Map<string, number[]>;
}

/** The code objects of a `--perf-basic-prof` map; of two at one address, the later wins (code freed, its space reused). */
export class PerfMap {
  readonly #starts: number[] = [];
  readonly #ends: number[] = [];
  readonly #names: string[] = [];

  constructor(text: string) {
    const entries: { start: number; end: number; name: string; at: number }[] = [];
    for (const line of text.split('\n')) {
      const match = /^([0-9a-f]+) ([0-9a-f]+) (.+)$/.exec(line);
      if (match)
        entries.push({
          start: Number.parseInt(match[1] as string, 16),
          end: Number.parseInt(match[1] as string, 16) + Number.parseInt(match[2] as string, 16),
          name: match[3] as string,
          at: entries.length,
        });
    }
    // Sorted by start, the later entry last among equal starts: a lookup goes back from the last
    // start at or below the address and takes the first entry that holds it.
    entries.sort((a, b) => a.start - b.start || a.at - b.at);
    for (const entry of entries) {
      this.#starts.push(entry.start);
      this.#ends.push(entry.end);
      this.#names.push(entry.name);
    }
  }

  /** The name of the code object holding `address`, undefined when none does. */
  nameAt(address: number): string | undefined {
    let low = 0;
    let high = this.#starts.length - 1;
    let last = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if ((this.#starts[middle] as number) <= address) {
        last = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    // Code objects do not nest; a few back is enough to pass the ones that ended before `address`.
    for (let k = last; k >= 0 && k > last - 8; k--)
      if (address < (this.#ends[k] as number)) return this.#names[k];
    return undefined;
  }
}

/**
 * `JS:*judge file:///repo/src/judging/trace-judge.ts:1:1234` as `judge src/judging/trace-judge.ts`:
 * the tier mark (`*` optimized, `^` baseline, `~` interpreted, `+` mid-tier) dropped, so one
 * function's code in every tier counts as one, the path relative to `root`, and the position
 * dropped (in a file tsx transformed, every function is on line 1).
 */
export function functionName(name: string, root: string): string {
  const js = /^(?:JS|LazyCompile|Function):[*^~+]?(\S*) (?:file:\/\/)?(\S*?)(?::\d+){0,2}$/.exec(name);
  if (!js) return name;
  const prefix = root.endsWith('/') ? root : `${root}/`;
  const path = (js[2] as string).startsWith(prefix) ? (js[2] as string).slice(prefix.length) : js[2];
  return `${js[1] || '(anonymous)'} ${path}`;
}

/** A position field of a cost line: absolute (decimal or hex), relative to the last (`+n`, `-n`), or the same (`*`). */
function position(field: string, last: number): number {
  if (field === '*') return last;
  if (field[0] === '+') return last + Number(field.slice(1));
  if (field[0] === '-') return last - Number(field.slice(1));
  return Number(field);
}

/** Reads a callgrind file's self costs by function, compiled JavaScript named through `perfMap`. */
export function readCallgrind(text: string, perfMap: PerfMap, root: string): FunctionCounts {
  let events: string[] = [];
  let positions = 1;
  const names = new Map<string, string>();
  const functions = new Map<string, number[]>();
  const named = new Map<number, string>();
  let fn = '';
  let address = 0;
  let skipNext = false;
  for (const row of text.split('\n')) {
    const first = row.charCodeAt(0);
    if ((first >= 48 && first <= 57) || first === 43 || first === 45 || first === 42) {
      const fields = row.split(' ');
      // The instruction's address first; the costs after every position field (the line's).
      address = position(fields[0] as string, address);
      if (skipNext) {
        skipNext = false;
        continue;
      }
      // Code with no symbol is V8's: callgrind names it by address.
      let name = fn;
      if (fn.startsWith('0x')) {
        name = named.get(address) ?? '';
        if (name === '') {
          const found = perfMap.nameAt(address);
          name = found === undefined ? '(unnamed code)' : functionName(found, root);
          named.set(address, name);
        }
      }
      let counts = functions.get(name);
      if (!counts) {
        counts = new Array<number>(events.length).fill(0);
        functions.set(name, counts);
      }
      for (let k = positions; k < fields.length; k++)
        counts[k - positions] = (counts[k - positions] as number) + Number(fields[k]);
      continue;
    }
    if (row.startsWith('events: ')) events = row.slice(8).trim().split(/\s+/);
    else if (row.startsWith('positions: ')) positions = row.slice(11).trim().split(/\s+/).length;
    else if (row.startsWith('calls=')) skipNext = true;
    else if (row.startsWith('fn=')) fn = compressedName(row.slice(3), names);
    else if (row.startsWith('cfn=')) compressedName(row.slice(4), names);
  }
  return { events, functions };
}

/** `(12) name` defines name 12, `(12)` uses it (callgrind's name compression). */
function compressedName(field: string, names: Map<string, string>): string {
  const match = /^\((\d+)\)(?: (.*))?$/.exec(field);
  if (!match) return field;
  if (match[2] !== undefined) names.set(match[1] as string, match[2]);
  return names.get(match[1] as string) ?? field;
}

/** {@link readCallgrind} of a file and the perf map of the process that wrote it. */
export function readCallgrindFiles(callgrindFile: string, perfMapFile: string, root: string): FunctionCounts {
  return readCallgrind(
    readFileSync(callgrindFile, 'utf8'),
    new PerfMap(readFileSync(perfMapFile, 'utf8')),
    root,
  );
}

/** `later` less `earlier`, function by function, divided by `per` (events in `later`'s order). */
export function countsBetween(earlier: FunctionCounts, later: FunctionCounts, per: number): FunctionCounts {
  const functions = new Map<string, number[]>();
  const index = later.events.map((event) => earlier.events.indexOf(event));
  for (const [name, counts] of later.functions) {
    const before = earlier.functions.get(name);
    functions.set(
      name,
      counts.map(
        (count, k) =>
          (count - (before && (index[k] as number) >= 0 ? (before[index[k] as number] as number) : 0)) / per,
      ),
    );
  }
  for (const [name, counts] of earlier.functions)
    if (!later.functions.has(name))
      functions.set(
        name,
        later.events.map((event) => -(counts[earlier.events.indexOf(event)] ?? 0) / per),
      );
  return { events: later.events, functions };
}

/** Where a function's code comes from: toolpath's source, V8's JSON parser, or the rest of V8 and node. */
export function groupOf(name: string): string {
  if (name.includes(' src/')) return "toolpath's code (src/)";
  if (/JsonParse/.test(name)) return "JSON.parse (V8's parser)";
  return 'the rest of V8 and node (builtins, runtime, GC)';
}

const ROWS = 25;
const LEGEND: Record<string, string> = {
  Ir: 'instructions',
  I1mr: 'L1 instruction misses',
  D1mr: 'L1 data read misses',
};

/**
 * Counts per trace as a table: the groups' totals, then the functions taking the most
 * instructions and, when counted, the most first-level instruction-cache misses.
 */
export function functionTable({ events, functions }: FunctionCounts): string[] {
  const shown = ['Ir', 'I1mr', 'D1mr'].map((event) => events.indexOf(event)).filter((at) => at >= 0);
  const kilo = (value: number) => `${(value / 1e3).toFixed(1)}k`.padStart(9);
  const row = (counts: readonly number[]) => shown.map((at) => kilo(counts[at] ?? 0)).join('');
  const header = `${shown.map((at) => (events[at] as string).padStart(9)).join('')}   (per trace: ${shown
    .map((at) => LEGEND[events[at] as string])
    .join(', ')})`;
  const groups = new Map<string, number[]>();
  for (const [name, counts] of functions) {
    const group = groupOf(name);
    const total = groups.get(group) ?? new Array(events.length).fill(0);
    counts.forEach((count, k) => {
      total[k] = (total[k] as number) + count;
    });
    groups.set(group, total);
  }
  const lines = ['', 'judging by function (the making subtracted)', header];
  for (const [group, counts] of groups) lines.push(`${row(counts)}   ${group}`);
  for (const event of ['Ir', 'I1mr']) {
    const at = events.indexOf(event);
    if (at < 0) continue;
    lines.push(
      '',
      `the ${ROWS} functions with the most ${event === 'Ir' ? 'instructions' : 'L1 instruction misses'}`,
      header,
    );
    const top = [...functions].sort((a, b) => (b[1][at] ?? 0) - (a[1][at] ?? 0)).slice(0, ROWS);
    for (const [name, counts] of top) lines.push(`${row(counts)}   ${name.slice(0, 100)}`);
  }
  return lines;
}
