/** The process edges a command uses, injectable so commands run in tests without spawning. */
import { readFile, writeFile } from 'node:fs/promises';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { suggestion } from '../scenario/suggestion.js';

/** Where a command reads and writes. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readStdin: () => Promise<string>;
  readFile: (path: string) => Promise<string>;
  writeFile: (path: string, text: string) => Promise<void>;
  /** Whether stdout is a terminal (colours). */
  isTTY: boolean;
  /** Whether stderr is a terminal (progress lines); absent means no. */
  stderrIsTTY?: boolean;
}

/** The real process. */
export function processIO(): CliIO {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    readFile: (path) => readFile(path, 'utf8'),
    writeFile: (path, text) => writeFile(path, text, 'utf8'),
    isTTY: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR,
    // CI sets CI=true and often allocates a pseudo-terminal: stay quiet there too.
    stderrIsTTY: Boolean(process.stderr.isTTY) && !process.env.CI,
  };
}

/** A usage mistake: printed with the command's usage, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * `parseArgs`, its complaints turned into a UsageError in the CLI's words: an unknown option
 * with the nearest known one (`unknown option --scenaro (did you mean --scenario?)`), a
 * missing value, an argument the command does not take.
 */
export function parseCommandLine<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(describeParseError(error as NodeJS.ErrnoException, config));
  }
}

function describeParseError(error: NodeJS.ErrnoException, config: ParseArgsConfig): string {
  const options = Object.entries(config.options ?? {});
  const quoted = /'([^']*)'/.exec(error.message)?.[1] ?? '';
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const written = quoted.replace(/=.*$/, '');
    const names = options.map(([name]) => `--${name}`);
    const known = names.length === 0 ? 'it takes no options' : `its options: ${names.join(', ')}`;
    const bare = written.replace(/^-+/, '');
    // A cut-short name (--conf) is as likely a slip as a typo.
    const extending = options.filter(([name]) => bare.length >= 3 && name.startsWith(bare));
    const [only] = extending;
    const hint =
      extending.length === 1 && only
        ? ` (did you mean --${only[0]}?)`
        : suggestion(
            bare,
            options.map(([name]) => name),
          ).replace(/mean /, 'mean --');
    return `unknown option ${written}${hint}; ${known}`;
  }
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const long = /--([\w-]+)/.exec(quoted || error.message)?.[1];
    const option = long === undefined ? undefined : options.find(([name]) => name === long);
    if (option && option[1].type === 'boolean') return `--${long} takes no value`;
    if (long !== undefined) return `--${long} needs a value (--${long} VALUE)`;
  }
  if (error.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
    return `unexpected argument "${quoted}": this command takes options only`;
  return error.message;
}
