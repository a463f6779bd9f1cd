/**
 * Every shell command the README shows, read from its fenced `sh` blocks (so this keeps holding
 * when the README is rewritten): each one is run in a scratch folder holding the files it names,
 * and what it prints is checked against what the README says it does. A command this file does
 * not know fails the first test, so a new one in the README gets a check here, or a reason why
 * it is run elsewhere.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { captureDemoTraces } from '../../src/demo/capture.js';
import { DEMO_SCENARIO } from '../../src/demo/conversations.js';
import { parseScenarioText } from '../../src/scenario/scenario.js';
import { temporaryDir } from '../helpers/temporary-dir.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The commands of the README's shell blocks: comments dropped, `[optional parts]` left out. */
function shellCommands(markdown: string): string[] {
  const commands: string[] = [];
  const fence = /^```(?:sh|bash|shell|console)\s*\n([\s\S]*?)^```/gm;
  for (const [, body] of markdown.matchAll(fence)) {
    const joined = (body ?? '').replace(/\\\n\s*/g, ' ');
    for (const raw of joined.split('\n')) {
      const line = raw
        .replace(/^\$ /, '')
        .replace(/\s{2,}#.*$/, '')
        .replace(/\s*\[[^\]]*\]/g, '')
        .trim();
      if (line !== '' && !line.startsWith('#')) commands.push(line);
    }
  }
  return commands;
}

interface Ran {
  code: number | null;
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let dir: string;
const groups: number[] = [];
afterAll(() => {
  for (const group of groups) signalGroup(group, 'SIGKILL');
});

/** Signals every process of a group; one already gone is not an error. */
function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {}
}

/** `npx toolpath` as the README's reader runs it, on this checkout's sources. */
const PRELUDE = `npx() { if [ "$1" = toolpath ]; then shift; node --import "${join(ROOT, 'node_modules/tsx/dist/loader.mjs')}" "${join(ROOT, 'src/cli/bin.ts')}" "$@"; else echo "npx $1: not expected here" >&2; return 127; fi; }\n`;

function sh(command: string, cwd = dir): Ran {
  const run = spawnSync('sh', ['-c', PRELUDE + command], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/**
 * Starts a long-running command in its own process group, waits for `ready` on stdout, and stops it
 * as Ctrl-C in a terminal does: SIGINT to the whole group. Signalling only the first process is not
 * what a reader does, and through `npm run` it reaches npm's shell, which dies and leaves toolpath
 * running. A command still running 30 s after the signal is killed and reported as `stuck`.
 */
async function startAndStop(command: string, cwd: string, ready: RegExp): Promise<Ran & { stuck: boolean }> {
  const child = spawn('sh', ['-c', `exec ${command}`], {
    cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const group = child.pid as number;
  groups.push(group);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => (stdout += chunk));
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  // 'close', not 'exit': through `npm run`, npm may exit on the signal before toolpath's stop line.
  let signal: NodeJS.Signals | null = null;
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code, by) => {
      signal = by;
      resolve(code);
    }),
  );
  const started = await Promise.race([
    new Promise<boolean>((resolve) => {
      const check = () => ready.test(stdout) && resolve(true);
      child.stdout?.on('data', check);
    }),
    exited.then(() => false),
  ]);
  let stuck = false;
  if (started) {
    signalGroup(group, 'SIGINT');
    const deadline = setTimeout(() => {
      stuck = true;
      signalGroup(group, 'SIGKILL');
    }, 30_000);
    await exited;
    clearTimeout(deadline);
  }
  const code = await exited;
  return { code, signal, stdout, stderr, stuck };
}

/** `npx toolpath ...` as a real command line: sh cannot exec a function. */
function execable(command: string): string {
  return command.replace(
    /^npx toolpath /,
    `node --import ${join(ROOT, 'node_modules/tsx/dist/loader.mjs')} ${join(ROOT, 'src/cli/bin.ts')} `,
  );
}

/** Whether nothing listens on 127.0.0.1:`port`. */
function portIsFree(port: number): boolean {
  const probe = spawnSync(process.execPath, [
    '-e',
    `require('node:net').createServer().once('error',()=>process.exit(1)).listen(${port},'127.0.0.1',function(){this.close(()=>process.exit(0))})`,
  ]);
  return probe.status === 0;
}

type Check = (command: string) => Promise<void> | void;

/** What each README command is checked to do; `elsewhere` says why it is not run here, and where it is. */
const KNOWN: { pattern: RegExp; check?: Check; elsewhere?: string }[] = [
  {
    pattern: /^npm (install|ci)\b|^cd .*npm (ci|i)\b|^npm pack\b/,
    elsewhere: 'installs from the registry: test/install/packed-package.test.ts packs and installs toolpath',
  },
  { pattern: /^npm test$/, elsewhere: 'is this suite' },
  {
    pattern: /^npm run (build|typecheck|lint)$/,
    elsewhere: "the CI steps; the packed-install test runs build (npm's prepare)",
  },
  { pattern: /^npm run bench(:\w+)?$/, elsewhere: 'minutes each; docs/performance.md has their figures' },
  {
    pattern: /^bash test\/install\/git-form\.sh$/,
    elsewhere: 'takes 3-7 minutes and a git server; run by hand',
  },
  {
    pattern: /^npm run demo$/,
    check: (command) => {
      const run = sh(command, ROOT);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^PASS .*good-refund/m);
      expect(run.stdout).toMatch(/^FAIL .*refund-before-policy/m);
      expect(run.stdout).toMatch(/^FAIL .*made-up-confirmation/m);
      expect(run.stdout).toContain('order.before');
      expect(run.stdout).toContain('grounding');
      expect(run.stdout).toMatch(/Evaluate them yourself:\n {2}npm run --silent toolpath -- eval /);
    },
  },
  {
    pattern: /^npx toolpath init\b/,
    check: (command) => {
      const project = join(dir, `project-${Math.random().toString(16).slice(2)}`);
      mkdirSync(project);
      writeFileSync(join(project, 'package.json'), '{"name":"your-app","version":"1.0.0"}\n');
      const run = sh(command, project);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      for (const file of [
        'toolpath/scenario.yaml',
        'toolpath/scenario.schema.json',
        'test/toolpath.test.ts',
        'toolpath/tracing.ts',
      ])
        expect(existsSync(join(project, file)), file).toBe(true);
      expect(run.stdout).toMatch(/npm i(nstall)? -D /);
    },
  },
  {
    pattern: /^npx toolpath eval --scenario refund\.yaml traces\/\*\.json$/,
    check: (command) => {
      const run = sh(command);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^PASS .*good-refund\.json/m);
      expect(run.stdout).toMatch(/^FAIL .*refund-before-policy\.json/m);
      expect(run.stdout).toMatch(/^ {4}x grounding.*R-7731/m);
    },
  },
  {
    pattern:
      /^npx toolpath eval -s refund\.yaml -s admin\.json --format json --out report\.json traces\/\*\.jsonl$/,
    check: (command) => {
      const run = sh(command);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/evaluations .*; report written to report\.json/);
      const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'));
      expect(report.summary).toMatchObject({ traces: 3, evaluated: 6, failed: 2 });
      expect(report.summary.scenarios.map((s: { id: string }) => s.id).sort()).toEqual([
        'demo.support.refund',
        'support.admin',
      ]);
    },
  },
  {
    pattern: /^cat trace\.json \| npx toolpath eval -s refund\.yaml -$/,
    check: (command) => {
      const run = sh(command);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^FAIL .*\(-, /m);
      expect(run.stdout).toContain('grounding');
    },
  },
  {
    pattern: /^npx toolpath inspect trace\.json$/,
    check: (command) => {
      const run = sh(command);
      expect(run.code).toBe(0);
      // Which convention claimed each span, and what it read of the calls.
      expect(run.stdout).toMatch(/spans: \d+ claimed \(otel-genai \d+\), 0 by no convention/);
      expect(run.stdout).toMatch(/otel-genai: call \S+ send_confirmation args /);
    },
  },
  {
    pattern: /^npx toolpath promote trace\.json -s refund\.yaml -o test\/fixtures\/made-up-id\.json$/,
    check: (command) => {
      const run = sh(command);
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(
        /written to test\/fixtures\/made-up-id\.json \(fail, 2 findings reproduced\)/,
      );
      expect(existsSync(join(dir, 'test/fixtures/made-up-id.expected.json'))).toBe(true);
      const again = sh('npx toolpath eval -s refund.yaml --expect test/fixtures/*.json');
      expect(again.stderr).toContain('expectations: 1 of 1 input reproduced');
      expect(again.code).toBe(0);
    },
  },
  {
    pattern: /^npx toolpath compare baseline\.json candidate\.json$/,
    check: (command) => {
      const run = sh(command);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(
        /^REGRESSED demo\.support\.refund: hard-failure rate 0\.00 -> 0\.67 \(worse by 0\.67\)$/m,
      );
    },
  },
  {
    pattern: /^npx toolpath view traces\/refund\.otlp\.json --scenario refund\.yaml$/,
    check: (command) => {
      const run = sh(command);
      expect(run.code).toBe(0);
      const page = readFileSync(join(dir, 'traces/refund.otlp.html'), 'utf8');
      expect(page).toMatch(/^<!doctype html>/i);
      expect(page).not.toMatch(/<script[^>]+src=|<link[^>]+href="http/);
    },
  },
  {
    pattern: /^npx toolpath serve --config toolpath\.yaml$/,
    check: async (command) => {
      const run = await startAndStop(execable(command), dir, /\n {2}findings .*\n/);
      expect(run.stuck, 'still running 30 s after Ctrl-C').toBe(false);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(
        /^toolpath serve: config toolpath\.yaml\n {2}OTLP\/HTTP {2}http:\/\/127\.0\.0\.1:\d+\/v1\/traces$/m,
      );
      expect(run.stdout).toMatch(/^toolpath serve: stopped; 0 traces judged, 0 late spans; nothing lost$/m);
    },
  },
  {
    pattern: /^(npx toolpath serve|npm run serve)$/,
    check: async (command) => {
      const free = portIsFree(4318) && portIsFree(4317);
      const run = await startAndStop(
        command.startsWith('npm') ? command : execable(command),
        command.startsWith('npm') ? ROOT : dir,
        /\n {2}findings .*\n/,
      );
      if (!free) {
        // The README's default ports are held here (a Collector): the refusal it gives instead.
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(/EADDRINUSE.*another process listens there/);
        return;
      }
      expect(run.stuck, 'still running 30 s after Ctrl-C').toBe(false);
      // npm itself may end on the SIGINT it was sent too; toolpath's own stop is its stop line.
      if (command.startsWith('npm') && run.signal === 'SIGINT') expect(run.code).toBe(null);
      else expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^toolpath serve: stopped; /m);
      expect(run.stdout).toContain('  OTLP/HTTP  http://127.0.0.1:4318/v1/traces');
      expect(run.stdout).toContain('  OTLP/gRPC  127.0.0.1:4317');
      expect(run.stdout).toMatch(/ {2}checks {5}no value taken from a failed call's result/);
    },
  },
];

beforeAll(async () => {
  dir = temporaryDir('toolpath-readme-');
  const traces = await captureDemoTraces();
  mkdirSync(join(dir, 'traces'));
  writeFileSync(join(dir, 'refund.yaml'), stringify(DEMO_SCENARIO));
  writeFileSync(
    join(dir, 'admin.json'),
    JSON.stringify({ id: 'support.admin', tools: { forbidden: ['admin_reset'] } }),
  );
  const lines: string[] = [];
  for (const { conversation, otlpJson } of traces) {
    writeFileSync(join(dir, 'traces', `${conversation.name}.json`), otlpJson);
    lines.push(JSON.stringify(JSON.parse(otlpJson)));
    if (conversation.name === 'made-up-confirmation') writeFileSync(join(dir, 'trace.json'), otlpJson);
    if (conversation.name === 'good-refund') writeFileSync(join(dir, 'traces', 'refund.otlp.json'), otlpJson);
  }
  // The Collector file exporter's form: one request per line.
  writeFileSync(join(dir, 'traces', 'collector.jsonl'), `${lines.join('\n')}\n`);
  writeFileSync(
    join(dir, 'toolpath.yaml'),
    'receivers:\n  otlp:\n    http: { endpoint: "127.0.0.1:0" }\n    grpc: { endpoint: "127.0.0.1:0" }\nscenarios: [refund.yaml]\n',
  );
  // A baseline of good runs, a candidate where two of three runs break a hard rule.
  const good = join(dir, 'traces', 'good-refund.json');
  sh(`npx toolpath eval -s refund.yaml --format json --out baseline.json ${good} ${good} ${good}`);
  sh(
    'npx toolpath eval -s refund.yaml --format json --out candidate.json traces/good-refund.json traces/made-up-confirmation.json traces/refund-before-policy.json',
  );
}, 120_000);

const COMMANDS = shellCommands(README);

describe("the README's commands", () => {
  it('are read from its shell blocks, and each one is known here', () => {
    expect(COMMANDS.length).toBeGreaterThan(10);
    const unknown = COMMANDS.filter((command) => KNOWN.filter((k) => k.pattern.test(command)).length !== 1);
    expect(unknown, 'README commands with no (or more than one) check in this file').toEqual([]);
  });

  const runnable = COMMANDS.flatMap((command) => {
    const known = KNOWN.find((k) => k.pattern.test(command));
    return known?.check ? [{ command, check: known.check }] : [];
  });
  it.each(runnable)(
    '$command does what the README says',
    async ({ command, check }) => {
      await check(command);
    },
    180_000,
  );
});

describe("the README's scenario examples", () => {
  const blocks = [...README.matchAll(/^```(json|yaml)\s*\n([\s\S]*?)^```/gm)].map(([, , body]) => body ?? '');
  it.each(blocks.map((body, index) => ({ index, body })))(
    'block $index loads as a scenario, and checks only tools it allows',
    ({ body }) => {
      const scenario = parseScenarioText(body, 'README.md');
      const allowed = scenario.rules.tools?.allowed;
      if (!allowed) return;
      const named = [
        ...(scenario.rules.arguments ?? []).map((rule) => rule.tool),
        ...(scenario.rules.order?.sequence?.steps ?? []).flatMap((step) =>
          'tool' in step ? [step.tool] : [],
        ),
      ];
      expect(named.filter((tool) => !allowed.includes(tool))).toEqual([]);
    },
  );
});
