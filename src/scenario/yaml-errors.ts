/** A YAML syntax error as one line that points at the line to fix. */
import type { YAMLError } from 'yaml';

/**
 * The yaml library finds an unclosed quote or flow collection (`[a, b` with no `]`) where the
 * parse gives up: the start of the next line. The fault is on the last non-blank line before
 * it, so that is the line named.
 */
export function describeYamlError(error: YAMLError, text: string): string {
  const message = (error.message.split('\n')[0] ?? error.message).replace(/ at line \d+, column \d+:?$/, '');
  const start = error.linePos?.[0];
  if (!start) return message;
  let { line, col } = start;
  const unclosed =
    (error.code === 'MISSING_CHAR' && /quote/i.test(message)) ||
    (error.code === 'BAD_INDENT' && /^Flow (sequence|map)/.test(message));
  if (unclosed && col === 1) {
    const lines = text.split(/\r?\n/);
    let previous = line - 1;
    while (previous > 1 && (lines[previous - 1] ?? '').trim() === '') previous--;
    if (previous >= 1) {
      line = previous;
      col = (lines[previous - 1] ?? '').search(/\S|$/) + 1;
    }
  }
  return `line ${line}, column ${col}: ${message}`;
}
