/** What the traces of `langgraph-agntcy-openllmetry/` in the real-world corpus must read as, written from their raw spans. */
import type { ExpectedTrace } from './corpus-reading-types.js';

export const AGNTCY_TRACES: ExpectedTrace[] = [];
