/**
 * Judging one agent trace counted in instructions, not time: valgrind's callgrind counts what a
 * process executes, the same from run to run whatever else the machine is doing (V8 runs with
 * `--predictable`, so it compiles and collects on the main thread in the same order each time:
 * two runs agree within about 0.1%). So a change of a few percent, which timings on this shared
 * machine cannot tell apart, shows here, and so does how much of bench:judge's ratio is work
 * rather than waiting on memory (instructions say nothing of cache misses; `--cache` counts those
 * of the simulated first-level caches, taking twice as long).
 *
 * Each contender runs in its own process (bench/instructions-run.ts) at two trace counts; the
 * difference divided by the traces between is what one trace costs, start-up and most of the
 * compiling left out. Contenders: making the trace (the baseline of judging), taking out its
 * JSON attributes (the baseline of parsing), `JSON.parse` of them and TraceJudge.judge; or, given
 * another checkout, the baseline, this checkout's judge and the other's on the same traces. About
 * a quarter of an hour on two cores. Needs valgrind (Debian's package `valgrind`).
 *
 * With `--by-function`, the baseline and this checkout's judge only, cache misses counted, and
 * then judging's counts function by function (bench/callgrind-functions.ts): what each function
 * of toolpath, V8's JSON parser and the rest of V8 take per trace, the making subtracted.
 *
 *   npx tsx bench/instructions.ts [--cache] [OTHER_CHECKOUT]
 *   npx tsx bench/instructions.ts --by-function
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  countsBetween,
  type FunctionCounts,
  functionTable,
  readCallgrindFiles,
} from './callgrind-functions.js';

/**
 * Traces made before the counted ones: V8 is still compiling judging's code thousands of traces
 * in (docs/performance.md), so only late traces tell what judging itself takes.
 */
const FROM = 7_000;
const TO = 10_000;

const byFunction = process.argv.includes('--by-function');
/** With `--cache`, callgrind also simulates this machine's first-level caches and counts their misses. */
const cache = byFunction || process.argv.includes('--cache');
const other = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
if (byFunction && other) {
  console.error('--by-function counts this checkout only');
  process.exit(2);
}
if (spawnSync('valgrind', ['--version']).error) {
  console.error('valgrind not found: it counts the instructions (Debian: apt-get install valgrind)');
  process.exit(2);
}

interface Contender {
  name: string;
  mode: 'make' | 'texts' | 'parse' | 'judge';
  checkout?: string;
}

const MAKE: Contender = { name: 'making the trace (baseline of judging)', mode: 'make' };
const TEXTS: Contender = { name: 'taking out its JSON attributes (baseline of parsing)', mode: 'texts' };
const PARSE: Contender = { name: 'JSON.parse of the JSON attributes', mode: 'parse' };
const JUDGE: Contender = { name: 'TraceJudge.judge', mode: 'judge' };
const OTHER: Contender = { name: `TraceJudge.judge of ${other}`, mode: 'judge', checkout: other };
/** Against another checkout, the parse is left out: the two judges' ratio needs only the baseline. */
const CONTENDERS: Contender[] = byFunction
  ? [MAKE, JUDGE]
  : other
    ? [MAKE, JUDGE, OTHER]
    : [MAKE, TEXTS, PARSE, JUDGE];
/** Where callgrind writes its files with `--by-function`. */
const outDir = byFunction ? mkdtempSync(join(tmpdir(), 'toolpath-callgrind-')) : '';

/** Callgrind's counts by event (`Ir` instructions, `I1mr` first-level instruction misses, …). */
type Events = Record<string, number>;

/** What one process executed (by function with `--by-function`), and what it printed of its work. */
function count(
  contender: Contender,
  traces: number,
): Promise<{ events: Events; said: string; functions?: FunctionCounts }> {
  const args = [
    '--tool=callgrind',
    ...(byFunction
      ? ['--dump-instr=yes', `--callgrind-out-file=${join(outDir, 'callgrind.%p')}`]
      : ['--callgrind-out-file=/dev/null']),
    ...(cache ? ['--cache-sim=yes'] : []),
    process.execPath,
    '--predictable',
    '--random-seed=1',
    // V8 names the code it compiles in /tmp/perf-PID.map, and leaves it where the map says.
    ...(byFunction ? ['--perf-basic-prof', '--no-compact-code-space'] : []),
    '--import',
    'tsx',
    'bench/instructions-run.ts',
    contender.mode,
    String(traces),
    ...(contender.checkout ? [contender.checkout] : []),
  ];
  return new Promise((resolve, reject) => {
    // tsx's transform cache off: a run that found the other checkout's files transformed by a
    // run before it would count less than its pair by the transforming, not by the judging.
    const env = { ...process.env, TSX_DISABLE_CACHE: '1' };
    const child = spawn('valgrind', args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const names = /Events {3,4}: ([\w ]+)/.exec(err)?.[1]?.trim().split(/\s+/);
      const values = /Collected : ([\d ]+)/.exec(err)?.[1]?.trim().split(/\s+/).map(Number);
      if (code !== 0 || !names || !values || names.length !== values.length) {
        reject(new Error(`${contender.mode} ${traces} exited ${code}:\n${err.slice(-2_000)}`));
        return;
      }
      const events = Object.fromEntries(names.map((name, at) => [name, values[at] as number]));
      resolve({ events, said: out.trim(), ...(byFunction && { functions: functionsOf(child.pid) }) });
    });
  });
}

/** The by-function counts of process `pid`, its files removed once read. */
function functionsOf(pid: number | undefined): FunctionCounts {
  const callgrindFile = join(outDir, `callgrind.${pid}`);
  const perfMap = `/tmp/perf-${pid}.map`;
  try {
    return readCallgrindFiles(callgrindFile, perfMap, process.cwd());
  } finally {
    rmSync(callgrindFile, { force: true });
    rmSync(perfMap, { force: true });
  }
}

/** Runs the jobs, as many at once as there are processors. */
async function inParallel<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const at = next++;
      results[at] = await (jobs[at] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), jobs.length) }, worker));
  return results;
}

const jobs = CONTENDERS.flatMap((contender) => [FROM, TO].map((traces) => () => count(contender, traces)));
const runs = await inParallel(jobs);
/** What `of` counted beyond `base`, divided by `per`. */
const over = (of: Events, base: Events, per = 1): Events =>
  Object.fromEntries(
    Object.keys(of).map((name) => [name, ((of[name] as number) - (base[name] as number)) / per]),
  );
/** Each event's count per trace of each contender, between the two counts. */
const perTrace: Events[] = CONTENDERS.map((_, k) =>
  over((runs[2 * k + 1] as { events: Events }).events, (runs[2 * k] as { events: Events }).events, TO - FROM),
);
const at = (contender: Contender) => perTrace[CONTENDERS.indexOf(contender)] as Events;
const kilo = (value: number | undefined) => `${((value ?? 0) / 1e3).toFixed(1)}k`;
/** Instructions, and with `--cache` the misses of the first-level caches. */
const counts = (events: Events) =>
  `${kilo(events.Ir)} instructions` +
  (cache
    ? `, ${kilo(events.I1mr)} L1 instruction misses, ${kilo(events.D1mr)} L1 data read misses, ${kilo(events.D1mw)} write misses`
    : '');

const make = at(MAKE);
const judgeOnly = over(at(JUDGE), make);
console.log(
  `per fresh agent trace (bench/judge.ts's: 11 spans), traces ${FROM}-${TO} of each process, callgrind${cache ? ' with its cache simulation' : ''}`,
);
console.log(`${MAKE.name}: ${counts(make)}`);
if (byFunction) {
  console.log(`${JUDGE.name}, over the baseline: ${counts(judgeOnly)}`);
  const [makeFrom, makeTo, judgeFrom, judgeTo] = runs.map((run) => run.functions as FunctionCounts);
  const judging = countsBetween(
    countsBetween(makeFrom as FunctionCounts, makeTo as FunctionCounts, TO - FROM),
    countsBetween(judgeFrom as FunctionCounts, judgeTo as FunctionCounts, TO - FROM),
    1,
  );
  for (const line of functionTable(judging)) console.log(line);
  rmSync(outDir, { recursive: true, force: true });
} else if (other) {
  const otherOnly = over(at(OTHER), make);
  console.log(`${JUDGE.name}, over the baseline: ${counts(judgeOnly)}`);
  console.log(`${OTHER.name}, over the baseline: ${counts(otherOnly)}`);
  console.log(
    `this checkout's judging / the other's: ${((judgeOnly.Ir as number) / (otherOnly.Ir as number)).toFixed(3)}x in instructions`,
  );
} else {
  const parseOnly = over(at(PARSE), at(TEXTS));
  console.log(`${TEXTS.name}: ${counts(at(TEXTS))}`);
  console.log(`${PARSE.name}, over its baseline: ${counts(parseOnly)}`);
  console.log(`${JUDGE.name}, over its baseline: ${counts(judgeOnly)}`);
  console.log(
    `TraceJudge.judge / JSON.parse: ${((judgeOnly.Ir as number) / (parseOnly.Ir as number)).toFixed(2)}x in instructions` +
      (cache
        ? `, ${((judgeOnly.I1mr as number) / (parseOnly.I1mr as number)).toFixed(1)}x in L1 instruction misses`
        : ''),
  );
}
console.log(
  `\nwhat each judging run said: ${runs
    .filter((_, at) => CONTENDERS[at >> 1]?.mode === 'judge')
    .map((run) => run.said)
    .join('; ')}`,
);
console.log(
  'instructions, not time: the budget (bench:judge) is CPU time, which also counts waiting on memory; shown beside it',
);
