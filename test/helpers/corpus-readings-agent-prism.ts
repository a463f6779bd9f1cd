/** What the traces of `openinference-agent-prism/` in the real-world corpus must read as, written from their raw spans. */
import type { ExpectedTrace } from './corpus-reading-types.js';

export const AGENT_PRISM_TRACES: ExpectedTrace[] = [];
