/**
 * `toolpath init [DIR] [--force]`: writes a starter scenario (with its JSON Schema, for editors),
 * a vitest test and the processor wiring into a project, then prints what to do next. It never overwrites a file
 * unless `--force`; every target is checked before any is written, so a refusal writes nothing.
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  SCENARIO_PATH,
  SCHEMA_PATH,
  STARTER_SCENARIO,
  STARTER_TEST,
  TEST_PATH,
  TRACING,
  TRACING_PATH,
} from './init-templates.js';
import { installCommands } from './install-hint.js';
import { type CliIO, parseCommandLine, UsageError } from './io.js';
import { scenarioJsonSchema } from './schema-command.js';

/** `    path  what it is` lines, the descriptions in one column whatever the paths' lengths. */
function fileLines(files: readonly (readonly [string, string])[]): string {
  const width = Math.max(...files.map(([path]) => path.length));
  return files.map(([path, what]) => `    ${path.padEnd(width)}  ${what}`).join('\n');
}

/** Usage text of `toolpath init`. */
export const INIT_USAGE = `usage: toolpath init [DIR] [--force]

  writes into DIR (default: the current directory):
${fileLines([
  [SCENARIO_PATH, 'a commented starter scenario (native format)'],
  [SCHEMA_PATH, 'its JSON Schema, for editors'],
  [TEST_PATH, 'a vitest test judging an agent run against the scenario'],
  [TRACING_PATH, 'the processor wiring: OpenTelemetry with toolpath judging live traces'],
])}
  then prints what to do next

  --force, -f  overwrite files that already exist (without it, an existing file is an error
               and nothing is written)

exit status: 0 written, 2 usage error or a file that exists or cannot be written
`;

/** One file `init` writes: its path relative to DIR and its text. */
interface InitFile {
  path: string;
  text: string;
}

/** The files `toolpath init` writes, paths relative to the project directory. */
export function initFiles(): InitFile[] {
  return [
    { path: SCENARIO_PATH, text: STARTER_SCENARIO },
    { path: SCHEMA_PATH, text: `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n` },
    { path: TEST_PATH, text: STARTER_TEST },
    { path: TRACING_PATH, text: TRACING },
  ];
}

/** Runs `toolpath init` with these arguments (after the word `init`); resolves to the exit code. */
export async function initCommand(args: readonly string[], io: CliIO): Promise<number> {
  const { dir, force } = parseInitArgs(args);
  const files = initFiles();

  // Every target is checked before anything is written: a refusal leaves the project untouched.
  const problems: string[] = [];
  for (const file of files) {
    const target = join(dir, file.path);
    const found = await existing(target);
    if (found === 'directory') problems.push(`${target}: exists and is a directory`);
    else if (found === 'file' && !force) problems.push(`${target}: exists (use --force to overwrite it)`);
    else if (found !== 'file' && found !== undefined) problems.push(`${target}: cannot write: ${found}`);
  }
  if (problems.length > 0) {
    for (const problem of problems) io.stderr(`toolpath init: ${problem}\n`);
    io.stderr('toolpath init: nothing written\n');
    return 2;
  }

  const written: string[] = [];
  for (const file of files) {
    const target = join(dir, file.path);
    try {
      await mkdir(dirname(target), { recursive: true });
      await io.writeFile(target, file.text);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      io.stderr(`toolpath init: ${target}: cannot write: ${code ?? (error as Error).message}\n`);
      if (written.length > 0) io.stderr(`toolpath init: already written: ${written.join(', ')}\n`);
      return 2;
    }
    written.push(target);
  }
  io.stdout(nextSteps(dir, written));
  return 0;
}

function parseInitArgs(args: readonly string[]): { dir: string; force: boolean } {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length > 1) {
    throw new UsageError(`expected at most one DIR; got ${positionals.length}: ${positionals.join(' ')}`);
  }
  return { dir: positionals[0] ?? '.', force: values.force ?? false };
}

function parse(args: readonly string[]) {
  return parseCommandLine({
    args: [...args],
    allowPositionals: true,
    strict: true,
    options: { force: { type: 'boolean', short: 'f' } },
  });
}

/** What is at `path`: a file, a directory, nothing, or why it cannot be looked at (an error code). */
async function existing(path: string): Promise<'file' | 'directory' | undefined | string> {
  try {
    return (await stat(path)).isDirectory() ? 'directory' : 'file';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // ENOTDIR (a parent is a file), EACCES: writing would fail, so say it before writing anything.
    return code === 'ENOTDIR' ? 'a parent directory is a file (ENOTDIR)' : (code ?? (error as Error).message);
  }
}

/** What to do after `init`: commands are run from DIR, the project root. */
function nextSteps(dir: string, written: readonly string[]): string {
  const cd = dir === '.' ? '' : `  cd ${dir}\n`;
  const install = installCommands(dir).map((command) => `  ${command}\n`);
  return `${written.map((path) => `wrote ${path}\n`).join('')}
next:
${cd}${install.join('')}  npx vitest run ${TEST_PATH}
      the test calls a stand-in agent so it passes as generated: replace it with your agent
      (the comment in the test marks where), and rename the tools in ${SCENARIO_PATH}
  npx toolpath eval --scenario ${SCENARIO_PATH} traces/*.json
      judges stored traces (OTLP JSON, Collector file-exporter JSON lines) against the scenario

  import './${TRACING_PATH.replace(/\.ts$/, '.js')}' first in your app's entry point
      judges live agent traces in process and writes the findings into them
      (npm i @opentelemetry/sdk-trace-node @opentelemetry/sdk-trace-base @opentelemetry/exporter-trace-otlp-http)
`;
}
