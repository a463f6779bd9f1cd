/**
 * Judging one agent trace counted in instructions, not time: valgrind's callgrind counts what a
 * process executes, the same from run to run whatever else the machine is doing (V8 runs with
 * `--predictable`, so it compiles and collects on the main thread in the same order each time:
 * two runs agree within about 0.1%). So a change of a few percent, which timings on this shared
 * machine cannot tell apart, shows here, and so does how much of bench:judge's ratio is work
 * rather than waiting on memory (instructions say nothing of cache misses: a fresh trace's share
 * of those is in bench:judge's time, not here).
 *
 * Each contender runs in its own process (bench/instructions-run.ts) at two trace counts; the
 * difference divided by the traces between is what one trace costs, start-up and most of the
 * compiling left out. Contenders: making the trace (the baseline of judging), taking out its
 * JSON attributes (the baseline of parsing), `JSON.parse` of them and TraceJudge.judge; or, given
 * another checkout, the baseline, this checkout's judge and the other's on the same traces. About
 * a quarter of an hour on two cores.
 * Needs valgrind (Debian's package `valgrind`).
 *
 *   npx tsx bench/instructions.ts [OTHER_CHECKOUT]
 */
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Traces made before the counted ones: V8 is still compiling judging's code thousands of traces
 * in (docs/performance.md), so only late traces tell what judging itself takes.
 */
const FROM = 7_000;
const TO = 10_000;

const other = process.argv[2];
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
/** Against another checkout, the parse is left out: the two judges' ratio needs only the baseline. */
const CONTENDERS: Contender[] = other
  ? [MAKE, JUDGE, { name: `TraceJudge.judge of ${other}`, mode: 'judge', checkout: other }]
  : [MAKE, TEXTS, PARSE, JUDGE];

/** Instructions one process executed, and what it printed of its work. */
function count(contender: Contender, traces: number): Promise<{ instructions: number; said: string }> {
  const args = [
    '--tool=callgrind',
    '--callgrind-out-file=/dev/null',
    process.execPath,
    '--predictable',
    '--random-seed=1',
    '--import',
    'tsx',
    'bench/instructions-run.ts',
    contender.mode,
    String(traces),
    ...(contender.checkout ? [contender.checkout] : []),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('valgrind', args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
      const collected = /Collected : (\d+)/.exec(err);
      if (code !== 0 || !collected) {
        reject(new Error(`${contender.mode} ${traces} exited ${code}:\n${err.slice(-2_000)}`));
        return;
      }
      resolve({ instructions: Number(collected[1]), said: out.trim() });
    });
  });
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
/** Instructions per trace of each contender, between the two counts. */
const perTrace = CONTENDERS.map((_, k) => {
  const [from, to] = [runs[2 * k], runs[2 * k + 1]] as [{ instructions: number }, { instructions: number }];
  return (to.instructions - from.instructions) / (TO - FROM);
});
const at = (contender: Contender) => perTrace[CONTENDERS.indexOf(contender)] as number;
const make = at(MAKE);
const judgeOnly = at(JUDGE) - make;
const kilo = (instructions: number) => `${(instructions / 1e3).toFixed(0)}k`;

console.log(
  `instructions per fresh agent trace (bench/judge.ts's: 11 spans), traces ${FROM}-${TO} of each process, callgrind`,
);
console.log(`${MAKE.name}: ${kilo(make)}`);
if (other) {
  const otherOnly = (perTrace[2] as number) - make;
  console.log(
    `${JUDGE.name}: ${kilo(judgeOnly)} over the baseline; ${CONTENDERS[2]?.name}: ${kilo(otherOnly)}`,
  );
  console.log(
    `this checkout's judging / the other's: ${(judgeOnly / otherOnly).toFixed(3)}x in instructions`,
  );
} else {
  const parseOnly = at(PARSE) - at(TEXTS);
  console.log(`${TEXTS.name}: ${kilo(at(TEXTS))}`);
  console.log(`${PARSE.name}: ${kilo(parseOnly)} over its baseline`);
  console.log(
    `${JUDGE.name}: ${kilo(judgeOnly)} over its baseline, ${(judgeOnly / parseOnly).toFixed(2)}x JSON.parse`,
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
