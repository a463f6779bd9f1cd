/**
 * The OpenAI Agents SDK's handoffs as the model asks for them: a request of the SDK's transfer
 * tool, `transfer_to_{agent}` (the agent's name in function style; lower-cased by the Python SDK).
 * The SDK records a handoff span only for the handoff it makes (asked for two in one response, it
 * makes the first and answers the second "Multiple handoffs detected, ignoring this one."), so the
 * request is what says a transfer was asked for; linking matches its target to the agent's run.
 */
import type { RequestedCall } from './convention.js';

const TRANSFER_PREFIX = 'transfer_to_';

/** Marks each transfer-tool request as a handoff to the agent its name gives. */
export function markTransferRequests(requested: readonly RequestedCall[]): void {
  for (const request of requested)
    if (request.tool.startsWith(TRANSFER_PREFIX) && request.tool.length > TRANSFER_PREFIX.length)
      request.handoff = {
        targetName: request.tool.slice(TRANSFER_PREFIX.length),
        targetType: 'agent',
        mode: 'pass_control',
      };
}
