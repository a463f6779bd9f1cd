/** What the traces of `vercel-ai-langfuse-export/` in the real-world corpus must read as, written from their raw spans. */
import type { ExpectedTrace } from './corpus-reading-types.js';

export const VERCEL_LANGFUSE_TRACES: ExpectedTrace[] = [];
