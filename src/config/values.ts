/**
 * The value types options are made of (durations, endpoints, caps), and the error every entry
 * point throws for a bad option. No option names or defaults here: those are in schema.ts.
 */
import { getHeapStatistics } from 'node:v8';
import { z } from 'zod';

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/** `30s`, `500ms`, `2m`, `1h`, or a number of milliseconds; parsed to milliseconds. */
export const duration = z
  .union([z.number(), z.string()])
  .transform((value, ctx) => {
    if (typeof value === 'number' && value >= 0) return value;
    const match = typeof value === 'string' ? DURATION.exec(value.trim()) : null;
    if (!match) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a duration like 500ms, 30s or 2m; got ${JSON.stringify(value)}`,
      });
      return z.NEVER;
    }
    return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  })
  .meta({ description: 'A duration: 500ms, 30s, 2m, 1h, or a number of milliseconds.' });

/** A duration that must pass before something happens: zero would mean at once, or never. */
export const positiveDuration = duration.refine((ms) => ms > 0, {
  message: 'expected a duration above zero, like 60s',
});

/** A count of at least `min`. */
export const count = (min = 1) => z.int().min(min);

/** `host:port`; a bare port means 127.0.0.1 (the safe default: listen only locally unless told). */
export const endpoint = z.string().transform((text, ctx) => {
  const match = /^(?:(.*):)?(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[2]);
  if (!match || port > 65_535) {
    ctx.addIssue({ code: 'custom', message: `expected host:port (e.g. 127.0.0.1:4318); got "${text}"` });
    return z.NEVER;
  }
  const host = match[1] === undefined || match[1] === '' ? '127.0.0.1' : match[1].replace(/^\[(.*)\]$/, '$1');
  return { host, port };
});

/** A default cap: `most` bytes, or `heapShare` of the heap V8 may grow to when that is less. */
export function heapShare(most: number, share: number): number {
  return Math.min(most, Math.floor(getHeapStatistics().heap_size_limit * share));
}

/** Options that cannot be used: one line per mistake, each naming the option. */
export class ConfigError extends Error {
  constructor(
    /** Where the options came from: a file's path, or the function that was given them. */
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(problems.map((problem) => `config ${source}: ${problem}`).join('\n'));
    this.name = 'ConfigError';
  }
}
