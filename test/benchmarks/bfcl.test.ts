/**
 * BFCL: over a sample of its published possible answers (bfcl-simple-python-sample.json), calls
 * that are right and calls changed in the ways models get them wrong (or differently right) are
 * judged by toolpath, against the scenario written from the entry (bfcl-scenarios.ts), and by
 * BFCL's checker rules (bfcl-checker.ts). The two agree on every call.
 */
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import type { JsonValue } from '../../src/model/json.js';
import type { TypedEvent } from '../../src/model/typed-event.js';
import { trajectoryFromTypedEvents } from '../../src/normalizers/typed-events.js';
import type { Scenario } from '../../src/scenario/scenario.js';
import { checkSimple, type ModelOutput } from './bfcl-checker.js';
import { type BfclEntry, scenarioOf } from './bfcl-scenarios.js';
import sample from './bfcl-simple-python-sample.json' with { type: 'json' };

const entries = sample.entries as unknown as BfclEntry[];

type Args = Record<string, JsonValue>;

/** A named model output for one entry. */
interface Case {
  what: string;
  output: ModelOutput;
}

/** The first value a possible-answer list offers (not the optional mark), as a model would write it. */
function firstValue(values: readonly JsonValue[]): JsonValue | undefined {
  const value = values.find((item) => item !== '');
  if (value === undefined) return undefined;
  if (Array.isArray(value) && value.length > 0 && isPossibleObject(value[0])) return value.map(firstObject);
  return isPossibleObject(value) ? firstObject(value) : value;
}

/** A possible object (values are lists of possible values), as in BFCL's answers for dict parameters. */
function isPossibleObject(value: JsonValue | undefined): value is Record<string, JsonValue[]> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every(Array.isArray)
  );
}

function firstObject(possible: JsonValue): JsonValue {
  const object: Args = {};
  for (const [key, values] of Object.entries(possible as Record<string, JsonValue[]>)) {
    const value = values.find((item) => item !== '');
    if (value !== undefined) object[key] = value;
  }
  return object;
}

/** A string written differently but the same once standardized: case, spacing, punctuation. */
function restyled(text: string): string[] {
  const styles = [text.toUpperCase(), text.replaceAll(' ', '_'), `${text}.`, text.replaceAll('"', "'")];
  return styles.filter((style) => style !== text);
}

/** A value that is not the same: another number, string, truth value, list or object. */
function changed(value: JsonValue): JsonValue[] {
  if (typeof value === 'number') return [value + 1, value + 0.5, String(value)];
  if (typeof value === 'string') return [`${value}zz`, '', 7];
  if (typeof value === 'boolean') return [!value, value ? 1 : 0];
  if (Array.isArray(value)) {
    const out: JsonValue[] = [value.slice(0, -1), [...value, value[0] ?? 1]];
    const reversed = [...value].reverse();
    if (JSON.stringify(reversed) !== JSON.stringify(value)) out.push(reversed);
    return out;
  }
  if (value === null) return [1];
  const [key] = Object.keys(value);
  if (key === undefined) return [{ extra: 1 }];
  const { [key]: first, ...rest } = value;
  return [rest, { ...value, extra: 'x' }, { ...value, [key]: `${String(first)}zz` }];
}

/** The calls judged for one entry. */
function casesOf(entry: BfclEntry): Case[] {
  const name = entry.function.name;
  const answers = Object.values(entry.ground_truth[0] ?? {})[0] ?? {};
  const base: Args = {};
  for (const [param, values] of Object.entries(answers)) {
    const value = firstValue(values);
    if (value !== undefined) base[param] = value;
  }
  const call = (args: Args): ModelOutput => [{ [name]: args }];
  const cases: Case[] = [{ what: 'every parameter, first possible answer', output: call(base) }];
  const optional = Object.keys(answers).filter((param) => answers[param]?.includes(''));
  if (optional.length > 0) {
    const without = { ...base };
    for (const param of optional) delete without[param];
    cases.push({ what: 'optional parameters left out', output: call(without) });
  }
  for (const [param, values] of Object.entries(answers)) {
    const given = base[param];
    for (const value of values) {
      if (value === '' || isPossibleObject(value)) continue;
      if (Array.isArray(value) && isPossibleObject(value[0])) continue;
      cases.push({
        what: `${param}: possible answer ${JSON.stringify(value)}`,
        output: call({ ...base, [param]: value }),
      });
    }
    if (values.includes('')) cases.push({ what: `${param}: ""`, output: call({ ...base, [param]: '' }) });
    if (given === undefined) continue;
    if (typeof given === 'string') {
      for (const style of restyled(given))
        cases.push({
          what: `${param}: restyled ${JSON.stringify(style)}`,
          output: call({ ...base, [param]: style }),
        });
    }
    if (Array.isArray(given) && given.some((item) => typeof item === 'string')) {
      const upper = given.map((item) => (typeof item === 'string' ? item.toUpperCase() : item));
      cases.push({ what: `${param}: items upper-cased`, output: call({ ...base, [param]: upper }) });
    }
    if (typeof given === 'object' && given !== null && !Array.isArray(given)) {
      const upper = Object.fromEntries(
        Object.entries(given).map(([key, item]) => [
          key,
          typeof item === 'string' ? item.toUpperCase() : item,
        ]),
      );
      cases.push({ what: `${param}: values upper-cased`, output: call({ ...base, [param]: upper }) });
    }
    for (const other of changed(given))
      cases.push({
        what: `${param}: changed to ${JSON.stringify(other)}`,
        output: call({ ...base, [param]: other }),
      });
    const { [param]: _, ...missing } = base;
    cases.push({ what: `${param} left out`, output: call(missing) });
  }
  cases.push({ what: 'an undocumented parameter', output: call({ ...base, unexpected_param: 1 }) });
  cases.push({ what: 'another function', output: [{ [`${name}_v2`]: base }] });
  cases.push({ what: 'two calls', output: [...call(base), ...call(base)] });
  cases.push({ what: 'no call', output: [] });
  return cases;
}

const scenarios = new Map(entries.map((entry) => [entry, scenarioOf(entry)]));

/** toolpath's verdict on a model output: each call made and answered, in order. */
function toolpathPasses(entry: BfclEntry, output: ModelOutput): boolean {
  const events: TypedEvent[] = [];
  output.forEach((call, index) => {
    const [tool, args] = Object.entries(call)[0] as [string, Args];
    events.push({ kind: 'call', id: `c${index + 1}`, tool, args });
    events.push({ kind: 'result', callId: `c${index + 1}`, ok: true, output: {} });
  });
  const report = evaluate(trajectoryFromTypedEvents(entry.id, events), scenarios.get(entry) as Scenario);
  if (report.verdict === 'inconclusive')
    throw new Error(`${entry.id}: inconclusive on ${JSON.stringify(output)}`);
  return report.pass;
}

describe('BFCL possible answers', () => {
  it('the sample holds 46 simple-category entries from the published data', () => {
    expect(entries).toHaveLength(46);
    expect(new Set(entries.map((entry) => entry.id)).size).toBe(46);
  });

  it('toolpath agrees with BFCL’s checker on every right and changed call', () => {
    const disagreements: string[] = [];
    let valid = 0;
    let total = 0;
    for (const entry of entries) {
      const possible = entry.ground_truth[0] as Record<string, Record<string, JsonValue[]>>;
      for (const { what, output } of casesOf(entry)) {
        const bfcl = checkSimple(entry.function, possible, output);
        const toolpath = toolpathPasses(entry, output);
        total++;
        if (bfcl.valid) valid++;
        if (toolpath !== bfcl.valid) {
          const said = bfcl.valid ? 'valid' : `invalid (${bfcl.error})`;
          disagreements.push(`${entry.id} ${what}: BFCL ${said}, toolpath ${toolpath ? 'pass' : 'fail'}`);
        }
      }
    }
    expect(disagreements).toEqual([]);
    // Both kinds are well represented: the agreement is not one-sided.
    expect(valid).toBeGreaterThan(150);
    expect(total - valid).toBeGreaterThan(400);
  });
});
