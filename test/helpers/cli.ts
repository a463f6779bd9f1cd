/** Runs the `toolpath` command in process, with real files and captured output. */
import { readFile, writeFile } from 'node:fs/promises';
import type { CliIO } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';

/** Output of one command run. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** An in-memory CliIO on real files, and what was written to its stdout and stderr. */
export function captureIO(
  stdin = '',
  stderrIsTTY = false,
): { io: CliIO; output: { stdout: string; stderr: string } } {
  const output = { stdout: '', stderr: '' };
  const io: CliIO = {
    stdout: (text) => {
      output.stdout += text;
    },
    stderr: (text) => {
      output.stderr += text;
    },
    readStdin: async () => stdin,
    readFile: (path) => readFile(path, 'utf8'),
    writeFile: (path, text) => writeFile(path, text, 'utf8'),
    isTTY: false,
    stderrIsTTY,
  };
  return { io, output };
}

/** Runs `toolpath ...args` in process; `stdin` is what `-` reads; `stderrIsTTY` as if on a terminal. */
export async function runCli(args: string[], stdin = '', stderrIsTTY = false): Promise<CliRun> {
  const { io, output } = captureIO(stdin, stderrIsTTY);
  const code = await main(args, io);
  return { code, ...output };
}

/** A CliIO on real files that drops stdout and fails the test on anything written to stderr. */
export function quietIO(): CliIO {
  return {
    stdout: () => {},
    stderr: (text) => {
      throw new Error(`unexpected stderr: ${text}`);
    },
    readStdin: async () => '',
    readFile: (path) => readFile(path, 'utf8'),
    writeFile: (path, text) => writeFile(path, text, 'utf8'),
    isTTY: false,
  };
}
