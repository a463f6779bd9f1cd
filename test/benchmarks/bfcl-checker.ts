/**
 * BFCL's AST checker for one function call (the `simple` category), restated from
 * bfcl_eval/eval_checker/ast_eval/ast_checker.py for Python: the oracle the BFCL test holds
 * toolpath to. Rules, in the checker's order:
 *
 * 1. exactly one call, to the function documented;
 * 2. every `required` parameter of the documentation is given;
 * 3. every given parameter is documented and has possible answers;
 * 4. its type is the documented one (an int is accepted for a float), or the type of the possible
 *    answers (a "variable"); lists and tuples have their items' type checked one level deep;
 * 5. its value is one of the possible answers: strings compared standardized (spaces and
 *    `,./-_*^` removed, lower-cased, `'` as `"`), in lists element by element, in objects value
 *    by value (each possible object lists possible values per key, `""` marking a key optional),
 *    lists of objects position by position;
 * 6. every possible-answer parameter not given has `""` among its answers (it is optional).
 *
 * Values are JSON values here, where a number is a number: a whole number counts as a float where
 * the documentation expects a float, at any depth. (BFCL reads Python values, where `[1, 3]` is a
 * list of ints that a float list rejects; JSON values do not keep that difference, and the test's
 * calls never rely on it.)
 */
import type { JsonValue } from '../../src/model/json.js';

/** A documented parameter, as BFCL's function documentation gives it. */
export interface ParameterDoc {
  type: string;
  items?: { type: string };
}

/** One function's documentation. */
export interface FunctionDoc {
  name: string;
  parameters: { properties: Record<string, ParameterDoc>; required: string[] };
}

/** Possible answers: per function name, per parameter, the values accepted (`""` = optional). */
export type PossibleAnswer = Record<string, Record<string, JsonValue[]>>;

/** A model's output: a list of `{function name: arguments}`. */
export type ModelOutput = Record<string, Record<string, JsonValue>>[];

/** BFCL's verdict on one output, and the checker's error type when it is invalid. */
export type CheckerVerdict = { valid: true } | { valid: false; error: string };

const PYTHON_TYPES: Record<string, string> = {
  string: 'str',
  integer: 'int',
  float: 'float',
  boolean: 'bool',
  array: 'list',
  tuple: 'list',
  dict: 'dict',
  any: 'str',
};

const VALID: CheckerVerdict = { valid: true };
const invalid = (error: string): CheckerVerdict => ({ valid: false, error });

/** The checker's verdict for the `simple` category. */
export function checkSimple(doc: FunctionDoc, possible: PossibleAnswer, output: ModelOutput): CheckerVerdict {
  if (output.length !== 1) return invalid('simple_function_checker:wrong_count');
  const answers = Object.values(possible)[0] as Record<string, JsonValue[]>;
  const call = output[0] as Record<string, Record<string, JsonValue>>;
  if (!Object.hasOwn(call, doc.name)) return invalid('simple_function_checker:wrong_func_name');
  const params = call[doc.name] as Record<string, JsonValue>;
  for (const name of doc.parameters.required) {
    if (!Object.hasOwn(params, name)) return invalid('simple_function_checker:missing_required');
  }
  for (const [name, value] of Object.entries(params)) {
    const described = doc.parameters.properties[name];
    const accepted = answers[name];
    if (described === undefined || accepted === undefined)
      return invalid('simple_function_checker:unexpected_param');
    const expected = PYTHON_TYPES[described.type] as string;
    const nested =
      described.type === 'array' || described.type === 'tuple'
        ? PYTHON_TYPES[described.items?.type ?? 'any']
        : undefined;
    const typed = typeCheck(value, accepted, expected, nested);
    if (!typed.valid) return invalid('type_error');
    if (!typed.variable) {
      if (expected === 'dict') {
        if (!dictCheck(value, accepted)) return invalid('value_error:dict');
        continue;
      }
      if (expected === 'list' && nested === 'dict') {
        if (!listDictCheck(value, accepted)) return invalid('value_error:list_dict');
        continue;
      }
      if (expected === 'str') {
        if (!stringCheck(value as string, accepted)) return invalid('value_error:string');
        continue;
      }
      if (expected === 'list') {
        if (!listCheck(value as JsonValue[], accepted)) return invalid('value_error:list');
        continue;
      }
    }
    if (!accepted.some((answer) => pythonEqual(answer, value))) return invalid('value_error:others');
  }
  for (const [name, accepted] of Object.entries(answers)) {
    if (!Object.hasOwn(params, name) && !accepted.includes(''))
      return invalid('simple_function_checker:missing_optional');
  }
  return VALID;
}

/** Python's type name for a JSON value; a number is a float where a float is expected. */
function pythonType(value: JsonValue, expected: string | undefined): string {
  if (value === null) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return expected === 'float' || !Number.isInteger(value) ? 'float' : 'int';
  if (typeof value === 'string') return 'str';
  return Array.isArray(value) ? 'list' : 'dict';
}

/** The type of the first possible answer that is not the optional mark, else undefined. */
function answerType(accepted: readonly JsonValue[], expected: string): string | undefined {
  const answer = accepted.find((item) => item !== '');
  return answer === undefined ? undefined : pythonType(answer, expected);
}

/** `type_checker`: valid when the type is the documented one or the answers' one (then a variable). */
function typeCheck(
  value: JsonValue,
  accepted: readonly JsonValue[],
  expected: string,
  nested: string | undefined,
): { valid: boolean; variable: boolean } {
  const possibleType = answerType(accepted, expected);
  const variable = possibleType !== undefined && possibleType !== expected;
  if (pythonType(value, expected) === expected) {
    if (nested === undefined) return { valid: true, variable };
    for (const answer of accepted) {
      let fits = true;
      if (Array.isArray(answer)) {
        for (const item of value as JsonValue[]) {
          if (!typeCheck(item, answer, nested, undefined).valid) {
            fits = false;
            break;
          }
        }
      }
      if (fits) return { valid: true, variable };
    }
    return { valid: false, variable };
  }
  if (possibleType !== undefined && pythonType(value, possibleType) === possibleType)
    return { valid: true, variable: true };
  return { valid: false, variable };
}

/** BFCL's `standardize_string`. */
export function standardize(text: string): string {
  return text
    .replace(/[ ,./\-_*^]/g, '')
    .toLowerCase()
    .replaceAll("'", '"');
}

function stringCheck(value: string, accepted: readonly JsonValue[]): boolean {
  const standardized = standardize(value);
  return accepted.some((answer) => typeof answer === 'string' && standardize(answer) === standardized);
}

function listCheck(value: readonly JsonValue[], accepted: readonly JsonValue[]): boolean {
  const standardized = value.map((item) => (typeof item === 'string' ? standardize(item) : item));
  return accepted.some((answer) => {
    // A string answer (the optional mark) iterates as its characters: "" is the empty list.
    const items = typeof answer === 'string' ? [...answer] : (answer as JsonValue[]);
    const candidate = items.map((item) => (typeof item === 'string' ? standardize(item) : item));
    return pythonEqual(candidate, standardized);
  });
}

function dictCheck(value: JsonValue, accepted: readonly JsonValue[]): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const answer of accepted) {
    if (answer === '') continue;
    const possible = answer as Record<string, JsonValue[]>;
    let fits = true;
    for (const [key, item] of Object.entries(value)) {
      if (!Object.hasOwn(possible, key)) {
        fits = false;
        break;
      }
      const standardized = typeof item === 'string' ? standardize(item) : item;
      const candidates = (possible[key] as JsonValue[]).map((candidate) =>
        typeof candidate === 'string' ? standardize(candidate) : candidate,
      );
      if (!candidates.some((candidate) => pythonEqual(candidate, standardized))) {
        fits = false;
        break;
      }
    }
    for (const [key, values] of Object.entries(possible)) {
      if (!Object.hasOwn(value, key) && !values.includes('')) fits = false;
    }
    if (fits) return true;
  }
  return false;
}

function listDictCheck(value: JsonValue, accepted: readonly JsonValue[]): boolean {
  const items = value as JsonValue[];
  return accepted.some((answer) => {
    const dicts = answer as JsonValue[];
    if (!Array.isArray(dicts) || dicts.length !== items.length) return false;
    return items.every((item, index) => dictCheck(item, [dicts[index] as JsonValue]));
  });
}

/** Python's `==` on JSON values: deep, numbers by value, `True == 1` as Python has it. */
function pythonEqual(a: JsonValue, b: JsonValue): boolean {
  if (typeof a === 'boolean' && typeof b === 'number') return Number(a) === b;
  if (typeof a === 'number' && typeof b === 'boolean') return a === Number(b);
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => pythonEqual(item, b[index] as JsonValue));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && pythonEqual(a[key] as JsonValue, b[key] as JsonValue));
}
