/**
 * `(did you mean x?)` hints for names written by hand: scenario keys, tool and milestone names,
 * command-line options.
 */
import { distance } from 'fastest-levenshtein';

/**
 * ` (did you mean x?)` for the known name closest to `word`, when it is close enough to be the
 * intended one: within a third of the word's length in edits (at least one), and never a
 * whole-word replacement. Else ''.
 */
export function suggestion(word: string, candidates: readonly string[]): string {
  const normalized = normalizeName(word);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const other = normalizeName(candidate);
    const edits = swapped(normalized, other) ? 1 : distance(normalized, other);
    if (edits < bestDistance) {
      best = candidate;
      bestDistance = edits;
    }
  }
  const tolerance = Math.min(Math.max(1, Math.floor(normalized.length / 3)), normalized.length - 1);
  return best !== undefined && bestDistance <= tolerance ? ` (did you mean ${best}?)` : '';
}

/** Case, `-` and `_` are the usual slips (`allowed-tools`, `callIndex`): ignore them when comparing. */
function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, '');
}

/** Whether `a` is `b` with two neighbouring letters swapped (`evla`, `veiw`): one slip, two edits to Levenshtein. */
function swapped(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let at = 0;
  while (at < a.length && a[at] === b[at]) at++;
  return (
    at < a.length - 1 && a[at] === b[at + 1] && a[at + 1] === b[at] && a.slice(at + 2) === b.slice(at + 2)
  );
}
