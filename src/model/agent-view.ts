/**
 * One agent's part of a trajectory: the calls its runs made and the turns they took, as a
 * Trajectory of its own, so every rule family judges it as it judges a whole trace. A call
 * belongs to the agent whose run made it (`ToolCall.agentName`, which the normalizers give from
 * the call's own span or its nearest agent run): a sub-agent's calls are the sub-agent's, and the
 * call that started a sub-agent (agent as a tool) is its caller's.
 */
import { type AgentRun, type ToolCall, Trajectory, type TrajectoryIssue, type Turn } from './trajectory.js';

/**
 * The names of the agents that ran, in order of first appearance: runs first (outermost first,
 * as the trajectory holds them), then names only calls give.
 */
export function agentNames(trajectory: Trajectory): string[] {
  const names = new Set<string>();
  for (const run of trajectory.agents) if (run.name !== undefined) names.add(run.name);
  for (const call of trajectory.calls) if (call.agentName !== undefined) names.add(call.agentName);
  return [...names];
}

/**
 * The trajectory restricted to one agent: its calls (in the same causal order, happens-before
 * unchanged), the turns of its runs, its runs. The root is the agent's, without times: a
 * duration is its calls' span. Issues stay the whole trace's: what could not be read anywhere
 * may be this agent's.
 */
export function agentView(trajectory: Trajectory, name: string): Trajectory {
  const runs: AgentRun[] = [];
  const runIds = new Set<string>();
  for (const run of trajectory.agents)
    if (run.name === name) {
      runs.push(run);
      runIds.add(run.id);
    }
  const calls: ToolCall[] = [];
  for (const call of trajectory.calls) if (call.agentName === name) calls.push(call);
  const turns: Turn[] = [];
  for (const turn of trajectory.turns)
    if (turn.runId !== undefined && runIds.has(turn.runId)) turns.push(turn);
  const traceIds = trajectory.traceIds;
  return new Trajectory({
    traceId: trajectory.traceId,
    calls,
    order: trajectory.causalOrder,
    callsInOrder: true,
    depthBounded: true,
    turns,
    agents: runs,
    root: { name: `agent ${name}`, agentName: name },
    issues: trajectory.issues as TrajectoryIssue[],
    spanCount: trajectory.spanCount,
    ...(trajectory.conversationId !== undefined && { conversationId: trajectory.conversationId }),
    ...(traceIds !== undefined && {
      conversation: { traceIds, traceOf: (call: ToolCall) => trajectory.traceIdOf(call) },
    }),
  });
}
