/**
 * The values a rule can be mined from: the string and number leaves of a call's arguments or
 * result, with their dot paths. Bounded: a value with more leaves is read up to the cap and the
 * rest is counted, so a huge search result never makes mining quadratic in its size.
 */
import type { JsonValue } from '../model/json.js';
import { type Captured, isReadable } from '../model/trajectory.js';
import { type PathHit, walkJson } from '../scenario/json-path.js';

/** Leaves read from one value at most; past it the value's other leaves are not mined. */
export const MAX_LEAVES = 512;

/** Counts what the cap left out, for the command to say. */
export interface LeafTally {
  /** Values that had more than {@link MAX_LEAVES} leaves. */
  truncated: number;
}

/**
 * The non-empty string and number leaves of a captured JSON value (none when it was not captured
 * or cannot be read). Booleans and null are left out: too common to say where a value came from.
 */
export function leavesOf(value: Captured<JsonValue>, tally: LeafTally): PathHit[] {
  if (!isReadable(value)) return [];
  const leaves: PathHit[] = [];
  for (const hit of walkJson(value.value)) {
    if (hit.path === '' || !isMinable(hit.value)) continue;
    if (leaves.length === MAX_LEAVES) {
      tally.truncated++;
      break;
    }
    leaves.push(hit);
  }
  return leaves;
}

function isMinable(value: JsonValue): boolean {
  return (typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value));
}
