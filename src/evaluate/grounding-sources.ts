/**
 * Where a grounding rule looks for a value: the calls whose results can ground it (the source
 * tool's, or every call's for `from: 'any'`), each result read once, and which of them hold a
 * value, by scan or by an index built when a rule looks up several values.
 */
import type { JsonValue } from '../model/json.js';
import { isReadable, type ToolCall, type Trajectory, unreadable } from '../model/trajectory.js';
import {
  holdsAt,
  holdsScalar,
  jsonValues,
  type PathHit,
  readPath,
  sameValueZero,
} from '../scenario/json-path.js';
import type { GroundingRule } from '../scenario/native.js';
import { deepEqualJson } from './match-args.js';
import { NO_CALLS } from './rule.js';
import { callsOfTool } from './trajectory-index.js';

/**
 * A result read once per rule: the values of its fields at `from.path` (or at any depth), with
 * their paths when the rule names one (reasons quote them), or why it cannot be read.
 */
export type SourceFields =
  | { readable: true; values: JsonValue[]; hits: PathHit[] | undefined }
  | { readable: false; why: string };

/** A scalar JSON value: what the holder index is keyed by. */
type JsonScalar = string | number | boolean | null;

/** One rule's sources. */
export class GroundingSources {
  readonly sources: readonly ToolCall[];
  /** The source tool, undefined for `from: 'any'`. */
  readonly fromTool: string | undefined;
  /** The field of the source result, undefined for any field at any depth. */
  readonly fromPath: string | undefined;
  readonly #relation: GroundingRule['relation'];
  /** Each source's result as read, made on first use. */
  #fields: Map<ToolCall, SourceFields> | undefined;
  /**
   * Which sources hold each scalar value, built on first use: `equals` is one lookup per value.
   * Keyed by the value itself: Map keys compare like JSON scalars (40 and 40.0 alike, never 40 and "40").
   */
  #holders: Map<JsonScalar, ToolCall[]> | undefined;
  /** Whether a scalar was looked up once already, by a scan: the next lookup builds the index. */
  #scanned = false;
  #blind: ToolCall[] | undefined;

  constructor(
    private readonly trajectory: Trajectory,
    rule: GroundingRule,
  ) {
    this.fromTool = rule.from === 'any' ? undefined : rule.from.tool;
    this.fromPath = rule.from === 'any' ? undefined : rule.from.path;
    this.#relation = rule.relation;
    this.sources = this.fromTool === undefined ? trajectory.calls : callsOfTool(trajectory, this.fromTool);
  }

  /**
   * True when `value` is the first scalar looked up and a scan finds a source that grounds it for
   * `call` (the usual case); the scan stands for that first lookup (see {@link holdersOf}).
   */
  groundsFirstLookup(call: ToolCall, value: JsonValue): boolean {
    if (this.#scanned || (value !== null && typeof value === 'object')) return false;
    if (!this.#groundedByScan(call, value)) return false;
    this.#scanned = true;
    return true;
  }

  /**
   * Whether a source that succeeded before `call` holds `value`: the usual grounded value, found
   * by a scan that stops at the first such source, reading no more results than it must and
   * keeping nothing. The holders of a value are only worked out for a value this does not ground.
   */
  #groundedByScan(call: ToolCall, value: JsonScalar): boolean {
    const path = this.fromPath;
    for (const source of this.sources) {
      if (!this.grounds(source, call)) continue;
      const { result } = source;
      if (!isReadable(result)) continue;
      if (path === undefined ? holdsScalar(result.value, value) : holdsAt(result.value, path, value))
        return true;
    }
    return false;
  }

  /** `source` succeeded and happened-before `call`: its result can ground `call`'s arguments. */
  grounds(source: ToolCall, call: ToolCall): boolean {
    return source.outcome.status === 'ok' && this.trajectory.happensBefore(source, call);
  }

  /**
   * The sources that succeeded but whose result cannot be read, computed once: from the result's
   * state alone, as {@link read} decides it, without reading the values of every other result.
   */
  unreadableOk(): readonly ToolCall[] {
    this.#blind ??= this.sources.filter(
      ({ outcome, result }) => outcome.status === 'ok' && !isReadable(result),
    );
    return this.#blind;
  }

  /**
   * The sources whose result has a field equal to `value`: for a scalar (the usual id or
   * amount) one scan for the first value asked about, one index lookup for each after it (the
   * index pays only when a rule checks several values); a scan with deep equality for an object
   * or array.
   */
  holdersOf(value: JsonValue): readonly ToolCall[] {
    if (value !== null && typeof value === 'object') {
      return this.sources.filter((source) => {
        const read = this.read(source);
        return read.readable && read.values.some((field) => deepEqualJson(field, value));
      });
    }
    if (this.#holders) return this.#holders.get(value) ?? NO_CALLS;
    if (!this.#scanned) {
      this.#scanned = true;
      return this.#scanHolders(value);
    }
    const index = new Map<JsonScalar, ToolCall[]>();
    for (const source of this.sources) {
      const values = this.#valuesOf(source);
      if (values === undefined) continue;
      for (const field of values) {
        if (field !== null && typeof field === 'object') continue;
        const holders = index.get(field);
        // Sources are indexed one after another: a source already last holds this value once.
        if (!holders) index.set(field, [source]);
        else if (holders[holders.length - 1] !== source) holders.push(source);
      }
    }
    this.#holders = index;
    return index.get(value) ?? NO_CALLS;
  }

  /** The sources holding a scalar, found without an index; equal as the index's Map keys are (SameValueZero). */
  #scanHolders(value: JsonScalar): readonly ToolCall[] {
    const holders: ToolCall[] = [];
    for (const source of this.sources) {
      if (this.fromPath === undefined) {
        // Any field of the result: walked with an early exit, nothing collected or kept, as
        // most rules look up one value.
        const { result } = source;
        if (isReadable(result) && holdsScalar(result.value, value)) holders.push(source);
        continue;
      }
      const read = this.read(source);
      if (!read.readable) continue;
      for (const field of read.values) {
        if (sameValueZero(field, value)) {
          holders.push(source);
          break;
        }
      }
    }
    return holders;
  }

  /** `contains` beyond equality: the value inside a string field, or an element of an array field. */
  contains(source: ToolCall, value: JsonValue): boolean {
    if (this.#relation !== 'contains') return false;
    const read = this.read(source);
    if (!read.readable) return false;
    return read.values.some((field) => {
      if (typeof field === 'string')
        return typeof value === 'string' && value !== '' && field.includes(value);
      return Array.isArray(field) && field.some((item) => deepEqualJson(item, value));
    });
  }

  /**
   * The values of the source's result the rule reads, undefined when it cannot be read: as
   * {@link read} has them, else read without keeping them (building the index reads every
   * source once, and keeping each read made the index cost a second table as large).
   */
  #valuesOf(source: ToolCall): JsonValue[] | undefined {
    const kept = this.#fields?.get(source);
    if (kept) return kept.readable ? kept.values : undefined;
    const { result } = source;
    if (!isReadable(result)) return undefined;
    if (this.fromPath === undefined) return jsonValues(result.value);
    return readPath(result.value, this.fromPath).map((hit) => hit.value);
  }

  /** The source's result as the rule reads it, read on first use. */
  read(source: ToolCall): SourceFields {
    this.#fields ??= new Map();
    let read = this.#fields.get(source);
    if (read) return read;
    const { result } = source;
    if (!result.captured) read = { readable: false, why: 'was not captured' };
    else if (result.parseError !== undefined) read = { readable: false, why: `is ${unreadable(result)}` };
    else if (this.fromPath === undefined) {
      read = { readable: true, values: jsonValues(result.value), hits: undefined };
    } else {
      const hits = readPath(result.value, this.fromPath);
      read = { readable: true, values: hits.map((hit) => hit.value), hits };
    }
    this.#fields.set(source, read);
    return read;
  }

  /** Why the source's result cannot be read (`was not captured`), '' when it can. */
  why(source: ToolCall): string {
    const read = this.read(source);
    return read.readable ? '' : read.why;
  }
}
