/**
 * Load-time checks of a match that the zod shapes cannot say alone (native.ts runs them in its
 * transform): a misused `oneOf` never loads, so evaluation never meets one.
 */
import type { z } from 'zod';
import type { JsonObject } from './assertions.js';
import { readPath, splitPath } from './json-path.js';

/**
 * Whether `oneOf` can be used as written: in a mode that compares arguments, on paths without `*`
 * that `args` does not also give and `ignore` does not leave out. Adds an issue per problem.
 */
export function acceptableValuesFit(match: ArgsMatchInput, ctx: z.RefinementCtx): boolean {
  const problems: { message: string; path: (string | number)[] }[] = [];
  if (match.mode === 'regex' || match.mode === 'schema') {
    problems.push({
      message: `oneOf compares argument values: use it with mode exact, superset or subset, not ${match.mode}`,
      path: ['oneOf'],
    });
  }
  for (const at of Object.keys(match.oneOf ?? {})) {
    const segments = splitPath(at);
    if (segments.includes('*')) {
      problems.push({
        message: 'a oneOf path names one argument: * is not supported here',
        path: ['oneOf', at],
      });
    } else if (match.args !== undefined && readPath(match.args, at).length > 0) {
      problems.push({
        message: `${at} is given in args too: give its value in args, or its accepted values in oneOf`,
        path: ['oneOf', at],
      });
    } else {
      const ignored = match.ignore?.find((ignore) => coversPath(splitPath(ignore), segments));
      if (ignored !== undefined)
        problems.push({
          message: `${at} is left out by ignore (${ignored}), so its accepted values would never be checked`,
          path: ['oneOf', at],
        });
    }
  }
  for (const problem of problems) ctx.addIssue({ code: 'custom', ...problem });
  return problems.length === 0;
}

/** The parts of a parsed match the checks read. */
interface ArgsMatchInput {
  mode: string;
  args?: JsonObject | undefined;
  ignore?: string[] | undefined;
  oneOf?: Record<string, unknown[]> | undefined;
}

/** Whether an `ignore` path (segments, `*` = any one) selects `segments` or something above it. */
function coversPath(ignore: readonly string[], segments: readonly string[]): boolean {
  if (ignore.length > segments.length) return false;
  return ignore.every((segment, index) => segment === '*' || segment === segments[index]);
}
