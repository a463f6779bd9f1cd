/**
 * `mcp.servers` and the destructive gate against brute-force oracles, on random trajectories of
 * calls to random servers (named, addressed, unnamed, or no MCP server at all).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkServers, destructiveness, mcpFamily } from '../../src/evaluate/mcp.js';
import type { McpServer, McpToolAnnotations, ToolCallDecision } from '../../src/model/trajectory.js';
import { buildTrajectory } from '../helpers/trajectory.js';

const NAMES = ['repo', 'shell', 'docs'];
const HOSTS = ['localhost', '10.0.0.7'];
const PORTS = [8080, 9000];

const serverArbitrary: fc.Arbitrary<McpServer | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constant({}),
  fc.record({ name: fc.constantFrom(...NAMES) }),
  fc.record({ address: fc.constantFrom(...HOSTS) }),
  fc.record({ address: fc.constantFrom(...HOSTS), port: fc.constantFrom(...PORTS) }),
  fc.record({
    name: fc.constantFrom(...NAMES),
    address: fc.constantFrom(...HOSTS),
    port: fc.constantFrom(...PORTS),
  }),
);
/** Every way a scenario may name a server of these. */
const ENTRIES = [...NAMES, ...HOSTS, ...HOSTS.flatMap((host) => PORTS.map((port) => `${host}:${port}`))];

function withServers(servers: readonly (McpServer | undefined)[]) {
  const trajectory = buildTrajectory(servers.map((_, index) => `tool_${index % 3}`));
  servers.forEach((server, index) => {
    const call = trajectory.calls[index];
    if (call && server !== undefined) call.mcpServer = server;
  });
  return trajectory;
}

/** The oracle: every name a server answers to, tried against every entry of both lists. */
function expectedServers(
  servers: readonly (McpServer | undefined)[],
  allowed: readonly string[] | undefined,
  forbidden: readonly string[],
): { status: string; offending: number[] } {
  const offending: number[] = [];
  let unknown = false;
  servers.forEach((server, index) => {
    if (server === undefined) return;
    const answersTo = ENTRIES.filter(
      (entry) =>
        entry === server.name ||
        entry === server.address ||
        (server.port !== undefined && entry === `${server.address}:${server.port}`),
    );
    if (answersTo.length === 0) unknown = true;
    else if (answersTo.some((entry) => forbidden.includes(entry))) offending.push(index);
    else if (allowed !== undefined && !answersTo.some((entry) => allowed.includes(entry)))
      offending.push(index);
  });
  // Calls, and none recorded as MCP: whether any went to a server cannot be told.
  const noneMcp = servers.length > 0 && servers.every((server) => server === undefined);
  const status = offending.length > 0 ? 'fail' : unknown || noneMcp ? 'inconclusive' : 'pass';
  return { status, offending };
}

describe('mcp.servers, against an oracle', () => {
  it('fails exactly on the calls to forbidden or unlisted servers; an unnamed one is inconclusive, never a pass', () => {
    fc.assert(
      fc.property(
        fc.array(serverArbitrary, { maxLength: 8 }),
        fc.option(fc.subarray(ENTRIES), { nil: undefined }),
        fc.subarray(ENTRIES),
        (servers, allowed, forbiddenAll) => {
          const forbidden = forbiddenAll.filter((entry) => !allowed?.includes(entry));
          const trajectory = withServers(servers);
          const result = checkServers(trajectory, { allowed, forbidden });
          const expected = expectedServers(servers, allowed, forbidden);
          expect(result.status).toBe(expected.status);
          if (expected.status === 'fail')
            expect(result.calls.map((call) => call.id)).toEqual(
              expected.offending.map((index) => `c${index + 1}`),
            );
          if (expected.status === 'pass')
            expect(result.calls.length).toBe(servers.filter((server) => server !== undefined).length);
        },
      ),
      { numRuns: 400 },
    );
  });
});

const annotationsArbitrary: fc.Arbitrary<McpToolAnnotations | undefined> = fc.option(
  fc.record({ readOnlyHint: fc.boolean(), destructiveHint: fc.boolean() }, { requiredKeys: [] }),
  { nil: undefined },
);

describe('the destructive gate, against an oracle', () => {
  it('classifies hints as MCP means them: destructiveHint counts only for a tool not read-only', () => {
    fc.assert(
      fc.property(annotationsArbitrary, (annotations) => {
        const readOnly = annotations?.readOnlyHint === true;
        const expected = readOnly
          ? 'not destructive'
          : annotations?.destructiveHint === true
            ? 'destructive'
            : annotations?.destructiveHint === false
              ? 'not destructive'
              : 'unknown';
        expect(destructiveness(annotations)).toBe(expected);
      }),
    );
  });

  it('a destructive tool passes only when each successful call had an allow decision; unknown hints never fail', () => {
    const callArbitrary = fc.record({
      tool: fc.constantFrom('delete_repo', 'list_repos'),
      mcp: fc.boolean(),
      annotations: annotationsArbitrary,
      allowed: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(callArbitrary, { minLength: 1, maxLength: 6 }), (specs) => {
        // One tool, one set of annotations (a listing is per tool): the first call's.
        const hints = new Map<string, McpToolAnnotations | undefined>();
        for (const spec of specs) if (!hints.has(spec.tool)) hints.set(spec.tool, spec.annotations);
        const decided: ToolCallDecision[] = [{ outcome: 'require_approval' }];
        const trajectory = buildTrajectory(
          specs.map((spec) => ({
            tool: spec.tool,
            decisions: spec.allowed ? [{ outcome: 'allow' }] : decided,
          })),
        );
        specs.forEach((spec, index) => {
          const call = trajectory.calls[index];
          if (!call) return;
          if (spec.mcp) call.mcpServer = {};
          const annotations = hints.get(spec.tool);
          if (spec.mcp && annotations) call.mcpAnnotations = annotations;
        });
        const results = mcpFamily(trajectory, { annotations: { destructive: 'requireApproval' } });
        for (const tool of hints.keys()) {
          const calls = specs.filter((spec) => spec.tool === tool);
          const kind = destructiveness(calls.some((spec) => spec.mcp) ? hints.get(tool) : undefined);
          const gated = kind === 'destructive' || (kind === 'unknown' && calls.some((spec) => spec.mcp));
          const result = results.find(
            (candidate) => candidate.name === `mcp.annotations.destructive:${tool}`,
          );
          if (!gated) {
            expect(result).toBeUndefined();
            continue;
          }
          const approved = calls.every((spec) => spec.allowed);
          const expected = approved ? 'pass' : kind === 'destructive' ? 'fail' : 'inconclusive';
          expect(result?.status).toBe(expected);
          expect(result?.alwaysHard).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('a trace with calls and none recorded as an MCP call', () => {
  it('leaves both MCP rules inconclusive, saying so, never passed', () => {
    const trajectory = withServers([undefined, undefined]);
    const results = mcpFamily(trajectory, {
      servers: { allowed: ['repo'] },
      annotations: { destructive: 'requireApproval', tools: {} },
    });
    expect(results.map((result) => [result.name, result.status])).toEqual([
      ['mcp.servers', 'inconclusive'],
      ['mcp.annotations.destructive', 'inconclusive'],
    ]);
    for (const result of results)
      expect(result.reason).toContain('no call in the trace is recorded as an MCP call');
    // No calls at all: nothing went to any server.
    expect(mcpFamily(withServers([]), { servers: { allowed: ['repo'] } })[0]?.status).toBe('pass');
  });
});
