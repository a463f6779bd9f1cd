/** What the traces of `any-agent/` in the real-world corpus must read as, written from their raw spans. */
import type { ExpectedTrace } from './corpus-reading-types.js';

export const ANY_AGENT_TRACES: ExpectedTrace[] = [];
