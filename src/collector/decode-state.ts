/**
 * What both OTLP decoders (JSON and protobuf) keep while decoding one request: the spans that
 * decoded, the first errors (bounded), and how many spans were rejected.
 */
import type { ExtendingStrings } from './extending-texts.js';
import type { DecodeOptions, DecodeResult } from './otlp-json.js';

/** A request being decoded. */
export interface DecodeState extends DecodeResult {
  /** Errors beyond `maxErrors`, summed up in one last error. */
  omittedErrors: number;
  maxErrors: number;
  /** The JSON decoder's long span attribute values, which later ones may extend. */
  strings?: ExtendingStrings;
}

/** An empty state for one request. */
export function startDecoding(options: DecodeOptions): DecodeState {
  return { spans: [], errors: [], rejectedSpans: 0, omittedErrors: 0, maxErrors: options.maxErrors ?? 100 };
}

/** Records an error, or counts it once `maxErrors` are listed, so memory stays bounded. */
export function addError(out: DecodeState, path: string, message: string): void {
  if (out.errors.length < out.maxErrors) out.errors.push({ path, message });
  else out.omittedErrors++;
}

/** The result, with the errors not listed summed up in one last error. */
export function finishDecoding(out: DecodeState): DecodeResult {
  if (out.omittedErrors > 0)
    out.errors.push({ path: '', message: `${out.omittedErrors} more errors not listed` });
  return { spans: out.spans, errors: out.errors, rejectedSpans: out.rejectedSpans };
}
