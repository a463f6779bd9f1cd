/**
 * A scenario from one BFCL entry (its function documentation and possible answers), by one
 * mapping for every entry: BFCL's AST checker said in the scenario language.
 *
 * - One call, to the documented function: `tools.allowed` and `tools.counts` (min 1, max 1).
 * - Its values: an `arguments` rule in `exact` mode (no parameter beyond the possible answers)
 *   with the possible answers as `oneOf` and `normalize` (BFCL's string standardization). `""`
 *   keeps meaning "optional", except on a parameter the documentation requires. A possible object
 *   (each key with its own possible values) becomes every object it allows, and a possible list of
 *   objects every list.
 * - Its types: an `arguments` rule in `schema` mode from the documentation (integer, number for
 *   float, string, boolean, array with its items' type, object), where a parameter may also have
 *   the type of its possible answers (BFCL's "variable"), and the required parameters.
 */
import type { JsonValue } from '../../src/model/json.js';
import { parseScenario, type Scenario } from '../../src/scenario/scenario.js';
import type { FunctionDoc, ParameterDoc } from './bfcl-checker.js';

/** One entry of the sample. */
export interface BfclEntry {
  id: string;
  function: FunctionDoc & {
    parameters: { properties: Record<string, ParameterDoc & { properties?: unknown }> };
  };
  ground_truth: Record<string, Record<string, JsonValue[]>>[];
}

const JSON_TYPES: Record<string, string> = {
  string: 'string',
  any: 'string',
  integer: 'integer',
  float: 'number',
  boolean: 'boolean',
  array: 'array',
  tuple: 'array',
  dict: 'object',
};

/** The native scenario document for one entry. */
export function scenarioDocument(entry: BfclEntry): Record<string, unknown> {
  const doc = entry.function;
  const answers = Object.values(entry.ground_truth[0] ?? {})[0] ?? {};
  const required = new Set(doc.parameters.required);
  const oneOf: Record<string, JsonValue[]> = {};
  for (const [name, values] of Object.entries(answers)) {
    const type = doc.parameters.properties[name]?.type;
    const items = doc.parameters.properties[name]?.items?.type;
    let accepted = values.flatMap((value): JsonValue[] => {
      if (value === '') return [''];
      if (type === 'dict') return possibleObjects(value as Record<string, JsonValue[]>);
      if ((type === 'array' || type === 'tuple') && items === 'dict')
        return possibleLists(value as Record<string, JsonValue[]>[]);
      return [value];
    });
    if (required.has(name)) accepted = accepted.filter((value) => value !== '');
    oneOf[name] = accepted;
  }
  const properties: Record<string, unknown> = {};
  for (const [name, described] of Object.entries(doc.parameters.properties)) {
    properties[name] = typeSchema(described, answers[name] ?? []);
  }
  return {
    id: `bfcl.${entry.id}`,
    tools: { allowed: [doc.name], counts: { [doc.name]: { min: 1, max: 1 } } },
    arguments: [
      { tool: doc.name, name: 'values', match: { mode: 'exact', oneOf, normalize: true } },
      {
        tool: doc.name,
        name: 'types',
        match: { mode: 'schema', schema: { type: 'object', properties, required: [...required] } },
      },
    ],
  };
}

/** The loaded scenario for one entry. */
export function scenarioOf(entry: BfclEntry): Scenario {
  const document = scenarioDocument(entry);
  return parseScenario(document, `${document.id as string}.json`);
}

/** The documented type, or the type of the possible answers when it differs (a "variable"). */
function typeSchema(described: ParameterDoc, answers: readonly JsonValue[]): Record<string, unknown> {
  const documented = JSON_TYPES[described.type] ?? 'string';
  const schema: Record<string, unknown> = { type: documented };
  if (documented === 'array' && described.items !== undefined)
    schema.items = { type: JSON_TYPES[described.items.type] ?? 'string' };
  const answer = answers.find((value) => value !== '');
  const answered = answer === undefined ? documented : jsonType(answer, documented);
  return answered === documented ? schema : { anyOf: [schema, { type: answered }] };
}

function jsonType(value: JsonValue, documented: string): string {
  if (typeof value === 'number')
    return documented === 'number' || !Number.isInteger(value) ? 'number' : 'integer';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : typeof value;
}

/** Every object a possible object allows: one value per key, a key with `""` also left out or `""`. */
function possibleObjects(possible: Record<string, JsonValue[]>): JsonValue[] {
  let objects: Record<string, JsonValue>[] = [{}];
  for (const [key, values] of Object.entries(possible)) {
    const next: Record<string, JsonValue>[] = [];
    for (const object of objects) {
      if (values.includes('')) next.push(object);
      for (const value of values) next.push({ ...object, [key]: value });
    }
    objects = next;
  }
  return objects;
}

/** Every list a possible list of objects allows, position by position. */
function possibleLists(possible: readonly Record<string, JsonValue[]>[]): JsonValue[] {
  let lists: JsonValue[][] = [[]];
  for (const item of possible) {
    const objects = possibleObjects(item);
    lists = lists.flatMap((list) => objects.map((object) => [...list, object]));
  }
  return lists;
}
