/** The process edges a command uses, injectable so commands run in tests without spawning. */
import { readFile, writeFile } from 'node:fs/promises';

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

/** Runs a command's argument parser, turning its complaint (an unknown option, a missing value) into a UsageError. */
export function parsingUsage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
