/** A YAML syntax error as one line that points at the line to fix. */
import type { YAMLError } from 'yaml';

/**
 * The yaml library finds an unclosed quote or flow collection (`[a, b` with no `]`) where the
 * parse gives up: a later line. The fault is on the line that opened it: the nearest line above,
 * past blank and comment lines, that holds the opening character, so that is the line named.
 * An indentation error is named at the key or item that is out of place, not at column 1.
 */
export function describeYamlError(error: YAMLError, text: string): string {
  const message = (error.message.split('\n')[0] ?? error.message).replace(/ at line \d+, column \d+:?$/, '');
  const start = error.linePos?.[0];
  if (!start) return message;
  let { line, col } = start;
  const opening = openingOf(error, message);
  const lines = text.split(/\r?\n/);
  if (opening) {
    let above = line - 1;
    while (above >= 1 && /^\s*(#.*)?$/.test(lines[above - 1] ?? '')) above--;
    const at = (lines[above - 1] ?? '').indexOf(opening);
    if (above >= 1 && at >= 0) {
      line = above;
      col = at + 1;
    }
  }
  // An indentation error is reported at the line's first byte; the fault is the token it indents.
  if (!opening && col === 1) col = (/^[ \t]*/.exec(lines[line - 1] ?? '')?.[0].length ?? 0) + 1;
  return `line ${line}, column ${col}: ${message}`;
}

/** The character an unclosed construct was opened with, for the errors that report it late. */
function openingOf(error: YAMLError, message: string): string | undefined {
  if (error.code === 'MISSING_CHAR' && /quote/i.test(message)) return /'/.test(message) ? "'" : '"';
  if (error.code === 'BAD_INDENT' && message.startsWith('Flow sequence')) return '[';
  if (error.code === 'BAD_INDENT' && message.startsWith('Flow map')) return '{';
  return undefined;
}
