/**
 * Which judged traces go on to the exporter. Every risky trace is kept (a hard finding, an
 * error, an irreversible tool, a tool or scenario version seen for the first time, a configured
 * attribute); of the rest, a fraction chosen by trace id, the same on every instance and every
 * replay. Kept traces carry the reason and the adjusted count (how many traces each one stands
 * for) so backends can weight them.
 */

import type { Attributes } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Report } from '../model/report.js';
import type { AttributeValue } from '../model/span-record.js';

/** Risk sampling settings. */
export interface SamplingOptions {
  /** Fraction (0..1) of traces with no risk that are kept, chosen by trace id. Default 1: keep all. */
  ratio?: number;
  /** Keep a trace when any of its spans has this attribute: with this value, or any value for `true`. */
  keepAttributes?: Readonly<Record<string, AttributeValue | true>>;
  /** Tools whose every call keeps its trace, beside each scenario's `safety.irreversible` tools. */
  keepTools?: readonly string[];
}

/** Why a trace was kept or dropped, in the order the reasons are checked. */
export type SamplingReason =
  | 'hard_finding'
  | 'error'
  | 'irreversible_tool'
  | 'new_tool'
  | 'new_scenario_version'
  | 'attribute'
  | 'ratio'
  /** In process: a `forceFlush` passed part of the trace on before it was judged, so it is kept whole. */
  | 'flushed';

/** The decision for one trace. */
export interface SamplingDecision {
  keep: boolean;
  reason: SamplingReason;
  /** How many traces this one stands for: 1 when kept for a risk, 1/ratio when kept by ratio. */
  adjustedCount: number;
}

/** What the sampler looks at in one judged trace. */
export interface SampledTrace {
  traceId: string;
  reports: readonly Report[];
  /** Some span of the trace had error status. */
  hasError: boolean;
  /** Names of the tools called. */
  tools: Iterable<string>;
  /** Attributes of the trace's spans, looked at only when `keepAttributes` is set. */
  spanAttributes: () => Iterable<Readonly<Record<string, AttributeValue>>>;
  /** Some of its spans already went on (a flush in process): kept whole, whatever the ratio says. */
  partlyPassedOn?: boolean;
}

/** Tools and scenario versions remembered as "seen" at most: past it, nothing more counts as new. */
const MAX_REMEMBERED = 10_000;
/** Randomness is read from the trace id's last 13 hex digits (W3C trace ids end in random bits). */
const RANDOM_HEX_DIGITS = 13;

/** What {@link RiskSampler}'s look at one tool found, as bits: a tool that keeps its trace, a tool new to it. */
const KEEP = 1;
const NEW = 2;

/** Decides per trace; remembers tools and scenario versions it has seen. */
export class RiskSampler {
  private readonly ratio: number;
  private readonly keepTools: ReadonlySet<string>;
  private readonly keepAttributes: readonly [string, AttributeValue | true][];
  private readonly seenTools = new Set<string>();
  private readonly seenScenarios = new Set<string>();

  constructor(options: SamplingOptions = {}, irreversibleTools: Iterable<string> = []) {
    const ratio = options.ratio ?? 1;
    if (!(ratio >= 0 && ratio <= 1))
      throw new RangeError(`sampling.ratio must be between 0 and 1, got ${ratio}`);
    this.ratio = ratio;
    this.keepTools = new Set([...irreversibleTools, ...(options.keepTools ?? [])]);
    this.keepAttributes = Object.entries(options.keepAttributes ?? {});
  }

  /** The decision for `trace`; also records its tools and scenario versions as seen. */
  decide(trace: SampledTrace): SamplingDecision {
    // Remember every tool and version, whichever reason decides, so "new" means new.
    const { tools, reports } = trace;
    // Indexed where the tools are a list (as the evaluator gives them): for-of allocated per trace.
    let seen = 0;
    if (Array.isArray(tools)) {
      for (let t = 0; t < tools.length; t++) seen |= this.#see(tools[t] as string, (seen & KEEP) !== 0);
    } else {
      for (const tool of tools) seen |= this.#see(tool, (seen & KEEP) !== 0);
    }
    const keepTool = (seen & KEEP) !== 0;
    const newTool = (seen & NEW) !== 0;
    let newScenario = false;
    for (let r = 0; r < reports.length; r++) {
      const report = reports[r] as Report;
      const label = `${report.scenario.id}@${report.scenario.version ?? ''}`;
      if (!this.seenScenarios.has(label) && this.seenScenarios.size < MAX_REMEMBERED) {
        this.seenScenarios.add(label);
        newScenario = true;
      }
    }
    if (hasHardFinding(trace.reports)) return risk('hard_finding');
    if (trace.hasError) return risk('error');
    if (keepTool) return risk('irreversible_tool');
    if (newTool) return risk('new_tool');
    if (newScenario) return risk('new_scenario_version');
    if (this.keepAttributes.length > 0 && this.matchesAttribute(trace)) return risk('attribute');
    // Part of it is downstream already: the rest follows, and it stands for itself.
    if (trace.partlyPassedOn === true) return { keep: true, reason: 'flushed', adjustedCount: 1 };
    if (this.ratio >= 1) return { keep: true, reason: 'ratio', adjustedCount: 1 };
    const keep = traceIdFraction(trace.traceId) < this.ratio;
    return { keep, reason: 'ratio', adjustedCount: keep ? 1 / this.ratio : 0 };
  }

  /**
   * Remembers `tool` as seen: {@link KEEP} when it keeps its trace (asked only until one did),
   * {@link NEW} when it had not been seen.
   */
  #see(tool: string, kept: boolean): number {
    let seen = !kept && this.keepTools.has(tool) ? KEEP : 0;
    if (!this.seenTools.has(tool) && this.seenTools.size < MAX_REMEMBERED) {
      this.seenTools.add(tool);
      seen |= NEW;
    }
    return seen;
  }

  private matchesAttribute(trace: SampledTrace): boolean {
    for (const attributes of trace.spanAttributes()) {
      for (const [key, wanted] of this.keepAttributes) {
        if (!(key in attributes)) continue;
        if (wanted === true || attributes[key] === wanted) return true;
      }
    }
    return false;
  }
}

/** Kept for a risk: the trace stands for itself alone. */
function risk(reason: SamplingReason): SamplingDecision {
  return { keep: true, reason, adjustedCount: 1 };
}

function hasHardFinding(reports: readonly Report[]): boolean {
  for (let r = 0; r < reports.length; r++) {
    const { findings } = reports[r] as Report;
    for (let f = 0; f < findings.length; f++) {
      const finding = findings[f] as Report['findings'][number];
      if (finding.severity === 'hard' && !finding.inconclusive) return true;
    }
  }
  return false;
}

/** The trace id's random bits as a fraction in [0, 1): the same for a trace everywhere. */
export function traceIdFraction(traceId: string): number {
  const digits = traceId.slice(-RANDOM_HEX_DIGITS);
  const value = Number.parseInt(digits, 16);
  return Number.isNaN(value) ? 0 : value / 16 ** RANDOM_HEX_DIGITS;
}

/** The attributes that say why a trace was kept and how many traces it stands for. */
export function samplingAttributes(decision: SamplingDecision): Record<string, string | number> {
  return {
    'toolpath.sampling.reason': decision.reason,
    'toolpath.sampling.adjusted_count': decision.adjustedCount,
  };
}

/**
 * The span as exported, with the sampling stamp. The span has ended and must not be mutated, so
 * a view over it carries the extra attributes; everything else reads through to the span.
 */
export function stamped(span: ReadableSpan, decision: SamplingDecision): ReadableSpan {
  return Object.create(span, {
    attributes: { value: withAttributes(span.attributes, samplingAttributes(decision)), enumerable: true },
  }) as ReadableSpan;
}

/**
 * `{ ...base, ...extra }`, made with Object.assign: a spread followed by new keys is a slow path
 * in V8, Object.assign is not. Assigning an own `__proto__` key would set
 * the prototype instead, so attributes that have one take the spread.
 */
function withAttributes(base: Attributes, extra: Attributes): Attributes {
  if (Object.hasOwn(base, '__proto__')) return { ...base, ...extra };
  return Object.assign({}, base, extra);
}
