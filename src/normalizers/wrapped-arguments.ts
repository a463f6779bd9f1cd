/**
 * Tool inputs an instrumentation records wrapped around the arguments the model asked for.
 * OpenInference smolagents records a tool span's `input.value` as the Python call it makes,
 * `{"args": [], "sanitize_inputs_outputs": true, "kwargs": {...}}`: the kwargs are the arguments.
 * Recognised by that exact shape, never by a service name.
 */
import { isJsonObject, type JsonValue } from '../model/json.js';
import type { Captured } from '../model/trajectory.js';

const WRAPPED_KEYS = ['args', 'kwargs', 'sanitize_inputs_outputs'];

/** The arguments unwrapped, or why they could not be (then `args` is the recorded value). */
export interface UnwrappedArguments {
  args: Captured<JsonValue>;
  /** Set when the input has the wrapped shape but cannot be unwrapped (positional arguments). */
  problem?: string;
}

/** Unwraps a smolagents-style `{args, sanitize_inputs_outputs, kwargs}` input; any other input is returned as is. */
export function unwrapArguments(args: Captured<JsonValue>): UnwrappedArguments {
  if (!args.captured || args.parseError !== undefined || !isJsonObject(args.value)) return { args };
  const value = args.value;
  const keys = Object.keys(value).sort();
  if (keys.length !== WRAPPED_KEYS.length || keys.some((key, i) => key !== WRAPPED_KEYS[i])) return { args };
  const positional = value.args;
  const kwargs = value.kwargs;
  if (
    !Array.isArray(positional) ||
    !isJsonObject(kwargs) ||
    typeof value.sanitize_inputs_outputs !== 'boolean'
  )
    return { args };
  if (positional.length > 0)
    return {
      args,
      problem: `the tool input holds ${positional.length} positional argument(s) whose parameter names it does not record; kept as recorded`,
    };
  return { args: { captured: true, value: kwargs } };
}
