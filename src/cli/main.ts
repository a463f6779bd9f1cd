/** The `toolpath` command: dispatches to a subcommand; never prints a stack trace unless asked. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suggestion } from '../scenario/suggestion.js';
import { type CliIO, UsageError } from './io.js';

const USAGE = `usage: toolpath <command> [options]

commands:
  eval    evaluate stored traces against scenarios (toolpath eval --help)
  compare compare two sets of reports, dimension by dimension (toolpath compare --help)
  demo    run a small instrumented demo agent and evaluate its traces
  init    write a starter scenario and a vitest test into a project
  inspect show what toolpath read from each span of a trace (run it first when a verdict looks wrong)
  promote turn a stored trace into a minimal, redacted regression fixture
  schema  print the JSON Schema of the native scenario format, for editors
  serve   run the collector adapter: receive OTLP, judge traces, forward findings
  suggest write a first scenario per agent from traces of good runs (toolpath suggest --help)
  view    draw a trace's causal trajectory as a self-contained HTML page

options:
  --help, -h     this text
  --version, -v  the version
`;

interface Command {
  run: (args: readonly string[], io: CliIO) => Promise<number>;
  usage: string;
}

// Each command is imported when it runs, not before: `eval` never loads `serve`'s gRPC and exporters.
const COMMANDS: Record<string, () => Promise<Command>> = {
  eval: async () => {
    const { evalCommand, EVAL_USAGE } = await import('./eval-command.js');
    return { run: evalCommand, usage: EVAL_USAGE };
  },
  compare: async () => {
    const { compareCommand, COMPARE_USAGE } = await import('./compare-command.js');
    return { run: compareCommand, usage: COMPARE_USAGE };
  },
  init: async () => {
    const { initCommand, INIT_USAGE } = await import('./init-command.js');
    return { run: initCommand, usage: INIT_USAGE };
  },
  inspect: async () => {
    const { inspectCommand, INSPECT_USAGE } = await import('./inspect-command.js');
    return { run: inspectCommand, usage: INSPECT_USAGE };
  },
  demo: async () => {
    const { demoCommand } = await import('./demo-command.js');
    return { run: demoCommand, usage: 'usage: toolpath demo [--keep DIR]\n' };
  },
  promote: async () => {
    const { promoteCommand, PROMOTE_USAGE } = await import('./promote-command.js');
    return { run: promoteCommand, usage: PROMOTE_USAGE };
  },
  schema: async () => {
    const { schemaCommand, SCHEMA_USAGE } = await import('./schema-command.js');
    return { run: schemaCommand, usage: SCHEMA_USAGE };
  },
  serve: async () => {
    const { serveCommand, SERVE_USAGE } = await import('./serve-command.js');
    return { run: serveCommand, usage: SERVE_USAGE };
  },
  suggest: async () => {
    const { suggestCommand, SUGGEST_USAGE } = await import('./suggest-command.js');
    return { run: suggestCommand, usage: SUGGEST_USAGE };
  },
  view: async () => {
    const { viewCommand, VIEW_USAGE } = await import('./view-command.js');
    return { run: viewCommand, usage: VIEW_USAGE };
  },
};

/** Runs the command line; resolves to the exit status. */
export async function main(argv: readonly string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.stderr : io.stdout)(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    io.stdout(`${version()}\n`);
    return 0;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    io.stderr(`toolpath: unknown command "${name}"${suggestion(name, Object.keys(COMMANDS))}\n\n${USAGE}`);
    return 2;
  }
  const command = await load();
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(command.usage);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`toolpath ${name}: ${error.message}\n\n${command.usage}`);
      return 2;
    }
    const detail = process.env.TOOLPATH_DEBUG
      ? ((error as Error).stack ?? String(error))
      : (error as Error).message;
    io.stderr(
      `toolpath ${name}: internal error: ${detail}\n(set TOOLPATH_DEBUG=1 for the stack; please report it)\n`,
    );
    return 2;
  }
}

function version(): string {
  const path = fileURLToPath(new URL('../../package.json', import.meta.url));
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}
