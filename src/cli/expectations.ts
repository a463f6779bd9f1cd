/**
 * `toolpath eval --expect`: each input checked against the `NAME.expected.json` that
 * `toolpath promote` wrote beside it (the verdict and findings the fixture must reproduce),
 * rather than against pass or fail. A fixture of a failure is then a passing regression test.
 */
import { describeReadError } from '../scenario/read-error.js';
import type { CliIO } from './io.js';
import { differences, type ExpectedFindings, expectedOf } from './promote-fixture.js';
import type { SourcedReport } from './run-eval.js';

/** `NAME.json` → `NAME.expected.json`. */
export function expectedPathOf(fixture: string): string {
  return fixture.endsWith('.json')
    ? `${fixture.slice(0, -'.json'.length)}.expected.json`
    : `${fixture}.expected.json`;
}

/** Whether an input is an expectations file itself (a glob such as `fixtures/*.json` takes them in). */
export function isExpectationsFile(path: string): boolean {
  return path.endsWith('.expected.json');
}

/** One input against its expectations: what differs, one line each; empty when it holds. */
export interface ExpectationCheck {
  source: string;
  expected: string;
  problems: string[];
}

/** Reads each input's expectations and compares the reports made from it. */
export async function checkExpectations(
  sources: readonly string[],
  reports: readonly SourcedReport[],
  io: CliIO,
): Promise<ExpectationCheck[]> {
  const checks: ExpectationCheck[] = [];
  for (const source of sources) {
    const expectedPath = expectedPathOf(source);
    let expected: ExpectedFindings;
    try {
      expected = JSON.parse(await io.readFile(expectedPath)) as ExpectedFindings;
    } catch (error) {
      const why =
        error instanceof SyntaxError
          ? `${expectedPath}: not valid JSON (${error.message}); promote the trace again to rewrite it`
          : `${describeReadError(error, expectedPath)}; toolpath promote writes it beside the fixture`;
      checks.push({ source, expected: expectedPath, problems: [why] });
      continue;
    }
    const id = expected.scenario?.id;
    const made = reports.filter((r) => r.source === source && r.report.scenario.id === id);
    const [only] = made;
    const problems =
      made.length === 0
        ? [`scenario ${id} evaluated no trace of it (give that scenario with --scenario)`]
        : made.length > 1 || !only
          ? [`scenario ${id} evaluated ${made.length} traces of it; a fixture holds one`]
          : differences(expected, expectedOf(only.report));
    checks.push({ source, expected: expectedPath, problems });
  }
  return checks;
}
