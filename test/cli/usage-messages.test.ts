/**
 * What a mistyped command line prints: the option as written, the one meant when it is close,
 * and the options there are, never Node's parseArgs wording.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('usage mistakes', () => {
  it.each([
    [
      ['eval', '--scenaro', 'x.yaml', 'a.json'],
      'toolpath eval: unknown option --scenaro (did you mean --scenario?)',
    ],
    [
      ['eval', '-s', 'x.yaml', '--fromat', 'json', 'a.json'],
      'unknown option --fromat (did you mean --format?)',
    ],
    [
      ['compare', 'a.json', 'b.json', '--tolerence', '0.1'],
      'unknown option --tolerence (did you mean --tolerance?)',
    ],
    [['promote', 't.json', '--senario', 's.yaml'], 'unknown option --senario (did you mean --scenario?)'],
    [['view', 't.json', '--scenarios', 's.yaml'], 'unknown option --scenarios (did you mean --scenario?)'],
    [['init', '--forse'], 'unknown option --forse (did you mean --force?)'],
    [['serve', '--conf', 'x.yaml'], 'unknown option --conf (did you mean --config?)'],
    [['inspect', 't.json', '--trac', 'abc'], 'unknown option --trac (did you mean --trace?)'],
    [['eval', '-s'], 'toolpath eval: --scenario needs a value (--scenario VALUE)'],
    [['init', '--force=yes'], 'toolpath init: --force takes no value'],
    [['serve', 'extra'], 'toolpath serve: unexpected argument "extra": this command takes options only'],
    [
      ['eval', '--xyzzy'],
      'unknown option --xyzzy; its options: --scenario, --dataset, --format, --out, --expect',
    ],
  ])('%j says %s, with the usage, exit 2', async (args, message) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${message}`);
    expect(run.stderr).toContain(`usage: toolpath ${args[0]}`);
    expect(run.stderr).not.toMatch(/Unknown option|positional argument|argument missing|place it at the end/);
  });
});
