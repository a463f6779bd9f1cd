/**
 * A reference pairing that covers only if calls that never reported a result ended a certain way
 * is usually undecided: how they ended decides it. Not when such a call could stand for a
 * reference call asking `ok` and for another asking `error`: whichever way it ended, it stands
 * for one of them. This decides that case exactly, by trying both ends of each such call (up to
 * 2^10 combinations; beyond that the result stays undecided, which is never wrong, only unsure).
 * A call with no result that could stand only for reference calls asking one outcome is counted
 * as having ended the other way, the worst case for covering.
 */
import type { ToolCall } from '../model/trajectory.js';
import { maximumMatching } from './bipartite.js';
import { argumentsIgnored, classifyArguments, classifyPair } from './reference-args.js';
import type { NumberedCall } from './reference-messages.js';
import type { Needs, Pairing } from './reference-pairing.js';

/** At most this many calls are tried both ways (2^10 pairings). */
const MAX_TRIED = 10;

/** Whether `pairing` covers the sides `needs` names however its calls without a result ended. */
export function coveredWhicheverWayTheyEnded(pairing: Pairing, needs: Needs): boolean {
  const { references, calls, section } = pairing;
  const sure: number[][] = [];
  /** Per call (right), its edges that hold if it succeeded, and those that hold if it failed. */
  const ifOk = new Map<number, number[]>();
  const ifError = new Map<number, number[]>();
  for (let left = 0; left < references.length; left++) {
    const reference = references[left] as NumberedCall;
    const candidates = pairing.callsOf(reference.tool);
    if (argumentsIgnored(reference, section)) {
      sure.push([...candidates]);
      continue;
    }
    const edges: number[] = [];
    for (const right of candidates) {
      const call = calls[right] as ToolCall;
      const status = classifyPair(call, reference, section);
      if (status === 'match') edges.push(right);
      else if (
        status === 'unknown' &&
        call.outcome.status === 'no_result' &&
        (reference.outcome === 'ok' || reference.outcome === 'error') &&
        classifyArguments(call, reference, section) === 'match'
      ) {
        const byOutcome = reference.outcome === 'ok' ? ifOk : ifError;
        const list = byOutcome.get(right);
        if (list) list.push(left);
        else byOutcome.set(right, [left]);
      }
    }
    sure.push(edges);
  }
  const torn = [...ifOk.keys()].filter((right) => ifError.has(right));
  if (torn.length === 0 || torn.length > MAX_TRIED) return false;
  for (let ends = 0; ends < 1 << torn.length; ends++) {
    const edges = sure.map((list) => [...list]);
    torn.forEach((right, bit) => {
      const lefts = (ends >> bit) & 1 ? ifError.get(right) : ifOk.get(right);
      for (const left of lefts ?? []) edges[left]?.push(right);
    });
    const matching = maximumMatching(references.length, calls.length, edges);
    if (!pairing.covers(matching, needs)) return false;
  }
  return true;
}
