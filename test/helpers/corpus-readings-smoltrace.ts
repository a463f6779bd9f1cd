/** What the traces of `smolagents-openinference-smoltrace/` in the real-world corpus must read as, written from their raw spans. */
import type { ExpectedTrace } from './corpus-reading-types.js';

export const SMOLTRACE_TRACES: ExpectedTrace[] = [];
