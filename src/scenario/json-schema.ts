/**
 * The `schema` argument mode: a JSON Schema the call's arguments must satisfy, run by ajv. A
 * schema is checked and compiled once, when the scenario loads ({@link compileArgsSchema} in the
 * `match` schema's transform), and the validator is cached by the schema object, so evaluating
 * a trace never compiles.
 *
 * Every choice below keeps a schema from passing something silently, or from hanging:
 * - drafts 2020-12 (the default), 2019-09 and draft-07, picked by `$schema`; any other is refused;
 * - unknown keywords (`maximun`) and formats (no format validators are bundled) are load errors,
 *   not keywords that validate nothing;
 * - `pattern` and `patternProperties` run on RE2, like every user regex: linear time;
 * - objects are read through own properties only, so `constructor` is not "present" on `{}`;
 * - each schema gets its own ajv instance, so an `$id` in one scenario can never answer a
 *   `$ref` in another, whatever order scenarios load in.
 */
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonValue } from '../model/json.js';
import { compileRegex, describeValue, type JsonObject } from './assertions.js';

/** Something wrong with a schema: where inside it, and what. */
export interface SchemaProblem {
  /** The path inside the schema (`['properties', 'amount', 'maximum']`); empty for the whole schema. */
  path: (string | number)[];
  message: string;
}

/** A compiled schema, or why it cannot be used. */
export type SchemaCompilation =
  | { ok: true; validate: ValidateFunction }
  | { ok: false; problems: SchemaProblem[] };

/** The result of validating arguments: valid, or one readable line per violation. */
export type SchemaVerdict = { valid: true } | { valid: false; errors: string[] };

type AjvClass = typeof Ajv | typeof Ajv2019 | typeof Ajv2020;

interface Draft {
  name: string;
  metaSchemaId: string;
  /** The ajv class, loaded on first use: most runs compile no schema, and ajv is slow to load. */
  load: () => AjvClass;
}

const require = createRequire(import.meta.url);
const DRAFT_2020: Draft = {
  name: '2020-12',
  metaSchemaId: 'https://json-schema.org/draft/2020-12/schema',
  load: () => (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020,
};
const DRAFTS: readonly Draft[] = [
  DRAFT_2020,
  {
    name: '2019-09',
    metaSchemaId: 'https://json-schema.org/draft/2019-09/schema',
    load: () => (require('ajv/dist/2019.js') as { Ajv2019: typeof Ajv2019 }).Ajv2019,
  },
  {
    name: 'draft-07',
    metaSchemaId: 'http://json-schema.org/draft-07/schema',
    load: () => (require('ajv') as { Ajv: typeof Ajv }).Ajv,
  },
];

/** A `pattern` RE2 cannot run; thrown through ajv's compile, which rethrows it as is. */
class PatternRefused extends Error {
  constructor(
    readonly pattern: string,
    message: string,
  ) {
    super(message);
  }
}

/** ajv's RegExp engine hook: user patterns compile on RE2, and one RE2 cannot run is refused. */
const re2Engine = Object.assign(
  (pattern: string) => {
    const compiled = compileRegex(pattern);
    if (!compiled.ok) throw new PatternRefused(pattern, compiled.message);
    const { program } = compiled.regex;
    return { test: (text: string) => program.test(text) };
  },
  { code: 're2' },
);

/** Options of the instances that compile user schemas. */
const COMPILE_OPTIONS: Options = {
  allErrors: true, // a reason lists every violation (capped when shown), not just the first
  ownProperties: true,
  strictSchema: true,
  strictNumbers: true,
  // Valid schemas that ajv would merely frown on (`properties` without `type: object`) load.
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  validateSchema: false, // done beforehand, with readable messages, by the shared meta validator
  addUsedSchema: false,
  logger: false,
  code: { regExp: re2Engine },
};

/** One instance per draft validates schemas against the meta-schema; it never holds user schemas. */
const metaValidators = new Map<Draft, InstanceType<AjvClass>>();

function metaValidator(draft: Draft): InstanceType<AjvClass> {
  let instance = metaValidators.get(draft);
  if (!instance) {
    instance = new (draft.load())({ allErrors: true, logger: false });
    metaValidators.set(draft, instance);
  }
  return instance;
}

/** Compiled schemas by the schema object: one compilation per schema, however often it is used. */
const compiled = new WeakMap<object, SchemaCompilation>();

/**
 * Checks and compiles a JSON Schema for arguments, once per schema object. Problems say where in
 * the schema and what is wrong, ready to become scenario load errors.
 */
export function compileArgsSchema(schema: JsonObject): SchemaCompilation {
  let compilation = compiled.get(schema);
  if (!compilation) {
    compilation = compileUncached(schema);
    compiled.set(schema, compilation);
  }
  return compilation;
}

/**
 * Validates `value` against `schema` (compiled on first use when it did not come through a
 * scenario load). Errors read `amount: must be <= 100 (saw 150)`.
 */
export function validateAgainstSchema(
  schema: JsonObject,
  value: JsonValue,
): SchemaVerdict | { valid: 'unusable'; problems: SchemaProblem[] } {
  const compilation = compileArgsSchema(schema);
  if (!compilation.ok) return { valid: 'unusable', problems: compilation.problems };
  const { validate } = compilation;
  if (validate(value)) return { valid: true };
  const errors = (validate.errors ?? []).map((error) => describeValidationError(error, value));
  return { valid: false, errors: [...new Set(errors)] };
}

function compileUncached(schema: JsonObject): SchemaCompilation {
  const draft = pickDraft(schema);
  if (!('load' in draft)) return { ok: false, problems: [draft] };
  const meta = metaValidator(draft);
  if (!meta.validate(draft.metaSchemaId, schema)) {
    return { ok: false, problems: describeMetaErrors(meta.errors ?? [], schema, draft) };
  }
  // ajv skips a `__proto__` entry in these maps: the property would go unchecked, silently.
  const proto = findInSchema(
    schema,
    (key, _value, parent) => key === '__proto__' && SKIPPED_PROTO.has(parent ?? ''),
  );
  if (proto.length > 0) {
    return {
      ok: false,
      problems: [
        {
          path: proto,
          message:
            'a property named "__proto__" cannot be given here (the validator would skip it); ' +
            'use patternProperties {"^__proto__$": …} instead',
        },
      ],
    };
  }
  try {
    return { ok: true, validate: new (draft.load())(COMPILE_OPTIONS).compile(schema) };
  } catch (error) {
    if (error instanceof PatternRefused) {
      const { pattern } = error;
      const path = findInSchema(
        schema,
        (key, value, parent) =>
          (key === 'pattern' && value === pattern) || (parent === 'patternProperties' && key === pattern),
      );
      return { ok: false, problems: [{ path, message: error.message }] };
    }
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, problems: [describeCompileError(message, schema)] };
  }
}

/** The draft named by `$schema` (http or https, with or without the trailing `#`); 2020-12 when absent. */
function pickDraft(schema: JsonObject): Draft | SchemaProblem {
  if (!Object.hasOwn(schema, '$schema')) return DRAFT_2020;
  const declared = schema.$schema;
  const normalized =
    typeof declared === 'string' ? declared.replace(/#$/, '').replace(/^https:/, 'http:') : '';
  const found = DRAFTS.find((draft) => draft.metaSchemaId.replace(/^https:/, 'http:') === normalized);
  if (found) return found;
  return {
    path: ['$schema'],
    message: `expected one of ${DRAFTS.map((draft) => draft.metaSchemaId).join(', ')}; got ${describeValue(declared)}`,
  };
}

/** Meta-schema violations, one per place in the schema (the first is the most specific one). */
function describeMetaErrors(
  errors: readonly ErrorObject[],
  schema: JsonObject,
  draft: Draft,
): SchemaProblem[] {
  const byPath = new Map<string, SchemaProblem>();
  for (const error of errors) {
    if (byPath.has(error.instancePath)) continue;
    const path = pointerSegments(error.instancePath, schema);
    const found = valueAtPath(schema, path);
    const got = found.present ? `; got ${describeValue(found.value)}` : '';
    byPath.set(error.instancePath, {
      path,
      message: `not a valid JSON Schema (draft ${draft.name}): ${describeKeyword(error)}${got}`,
    });
  }
  return [...byPath.values()];
}

/** ajv's compile errors, reworded to say what to change. */
function describeCompileError(message: string, schema: JsonObject): SchemaProblem {
  const keyword = /^strict mode: unknown keyword: "(.*)"$/.exec(message);
  if (keyword) {
    const name = keyword[1] ?? '';
    return {
      path: findInSchema(schema, (key, _value, parent) => key === name && !NAME_MAPS.has(parent ?? '')),
      message: `unknown keyword "${keyword[1]}": a misspelt keyword would check nothing, so only JSON Schema keywords are accepted`,
    };
  }
  const format = /^unknown format "(.*)" ignored in schema at path "#(.*)"$/.exec(message);
  if (format) {
    return {
      path: [...pointerSegments(format[2] ?? '', undefined), 'format'],
      message: `format "${format[1]}" is not supported (no format validators are bundled); use pattern instead`,
    };
  }
  const reference = /^can't resolve reference (.*) from id (.*)$/.exec(message);
  if (reference) {
    return {
      path: [],
      message: `cannot resolve $ref ${reference[1]}: only references inside the schema itself are supported`,
    };
  }
  return { path: [], message: `not a usable JSON Schema: ${message}` };
}

/** Maps whose `__proto__` entry ajv leaves out. */
const SKIPPED_PROTO = new Set([
  'properties',
  'patternProperties',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
]);

/** Keywords whose keys are names (properties, definitions), not keywords. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/**
 * Where in the schema the first key satisfying `test` sits (depth first, in key order), given
 * the key, its value and the key of the object holding it; the whole schema when none does.
 * ajv's compile errors do not say where, and a user needs to know which keyword to fix.
 */
function findInSchema(
  schema: JsonValue,
  test: (key: string, value: JsonValue, parent: string | undefined) => boolean,
): (string | number)[] {
  const search = (value: JsonValue, parent: string | undefined): (string | number)[] | undefined => {
    if (typeof value !== 'object' || value === null) return undefined;
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        const found = search(value[index] as JsonValue, parent);
        if (found) return [index, ...found];
      }
      return undefined;
    }
    for (const key of Object.keys(value)) {
      const child = value[key] as JsonValue;
      if (test(key, child, parent)) return [key];
      const found = search(child, key);
      if (found) return [key, ...found];
    }
    return undefined;
  };
  return search(schema, undefined) ?? [];
}

/** Properties whose absence or excess is the error: there is no single value to show as "saw". */
const STRUCTURAL_KEYWORDS = new Set([
  'required',
  'additionalProperties',
  'unevaluatedProperties',
  'dependentRequired',
  'dependencies',
]);

/** `amount: must be <= 100 (saw 150)`, `must have required property 'order_id'`. */
function describeValidationError(error: ErrorObject, data: JsonValue): string {
  const path = pointerSegments(error.instancePath, data);
  const where = path.length === 0 ? '' : `${formatPath(path)}: `;
  const found = valueAtPath(data, path);
  const value = found.value as JsonValue;
  const primitive = value === null || typeof value !== 'object';
  const saw =
    found.present && primitive && !STRUCTURAL_KEYWORDS.has(error.keyword) ? ` (saw ${short(value)})` : '';
  return `${where}${describeKeyword(error)}${saw}`;
}

/** ajv's message, with the detail its params hold and its message leaves out. */
function describeKeyword(error: ErrorObject): string {
  const message = error.message ?? `fails ${error.keyword}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'enum':
      return `must be one of ${((params.allowedValues as JsonValue[] | undefined) ?? []).map(short).join(', ')}`;
    case 'const':
      return `must be ${short(params.allowedValue as JsonValue)}`;
    case 'additionalProperties':
      return `must not have the additional property ${JSON.stringify(params.additionalProperty)}`;
    case 'unevaluatedProperties':
      return `must not have the unevaluated property ${JSON.stringify(params.unevaluatedProperty)}`;
    default:
      return message;
  }
}

/** JSON pointer -> path segments; a segment is a number where the value there is an array. */
function pointerSegments(pointer: string, data: unknown): (string | number)[] {
  if (pointer === '') return [];
  const segments: (string | number)[] = [];
  let value = data;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const index = Array.isArray(value) && /^(0|[1-9]\d*)$/.test(key) ? Number(key) : undefined;
    segments.push(index ?? key);
    value = valueAtPath(value, [index ?? key]).value;
  }
  return segments;
}

/** The value at `path`, through own properties only. */
function valueAtPath(
  data: unknown,
  path: readonly (string | number)[],
): { present: boolean; value: unknown } {
  let value = data;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, segment)) {
      return { present: false, value: undefined };
    }
    value = (value as Record<string | number, unknown>)[segment];
  }
  return { present: true, value };
}

/** `items[0].sku`, `["odd key"]`: the path style of every argument reason. */
function formatPath(path: readonly (string | number)[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

const MAX_SHOWN = 60;

function short(value: JsonValue): string {
  const json = JSON.stringify(value) ?? 'undefined';
  return json.length > MAX_SHOWN ? `${json.slice(0, MAX_SHOWN - 1)}…` : json;
}
