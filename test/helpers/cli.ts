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

/** Runs `toolpath ...args` in process; `stdin` is what `-` reads; `stderrIsTTY` as if on a terminal. */
export async function runCli(args: string[], stdin = '', stderrIsTTY = false): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    readStdin: async () => stdin,
    readFile: (path) => readFile(path, 'utf8'),
    writeFile: (path, text) => writeFile(path, text, 'utf8'),
    isTTY: false,
    stderrIsTTY,
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}
