/**
 * Per-agent and handoff rules on the real-world corpus's multi-agent traces: the OpenAI Agents
 * SDK's handoff (logfire), the Phoenix sub-agent (a call whose span runs a second agent), and the
 * A2A supervisor (an unnamed LangChain supervisor whose call runs a LangGraph detector).
 */
import { expect, it } from 'vitest';
import { evaluate } from '../../src/evaluate/evaluate.js';
import type { Report } from '../../src/model/report.js';
import { normalizeSpans } from '../../src/normalizers/normalize.js';
import { parseScenario } from '../../src/scenario/scenario.js';
import { corpusSpans, describeCorpus } from '../helpers/corpus.js';

function judge(file: string, rules: Record<string, unknown>): Report {
  const [trajectory] = normalizeSpans(corpusSpans(file));
  if (!trajectory) throw new Error(`${file}: no trajectory`);
  return evaluate(trajectory, parseScenario({ id: 'corpus', ...rules }, 'corpus.yaml'));
}

const outcomes = (report: Report) => report.assertions.map((a) => `${a.name}:${a.status}`);

describeCorpus(
  'the OpenAI Agents SDK handoff (logfire): agent1 calls random_number, hands off to agent2',
  () => {
    const file = 'openai-agents-logfire/responses-tool-then-handoff.otlp.json';

    it('each agent judged on its own calls; the handoff is allowed, made, and within the budget', () => {
      const report = judge(file, {
        agents: {
          agent1: {
            tools: { allowed: ['random_number', 'transfer_to_agent2'], required: ['random_number'] },
          },
          agent2: { required: true, tools: { allowed: [] } },
        },
        handoffs: {
          allowed: [{ from: 'agent1', to: 'agent2' }],
          required: [{ from: 'agent1', to: 'agent2' }],
          max: 1,
        },
      });
      expect(report.findings).toEqual([]);
      expect(outcomes(report)).toEqual([
        'handoffs.allowed:pass',
        'handoffs.required[0]:pass',
        'handoffs.max:pass',
        'handoffs.not_made:pass',
        'agents.agent1.no_unexpected_tool:pass',
        'agents.agent1.expected_tool_calls:random_number:pass',
        'agents.agent2.required:pass',
        'agents.agent2.no_unexpected_tool:pass',
      ]);
    });

    it('agent2 may not call random_number: it did not, agent1 did; a reversed pair is not allowed', () => {
      const report = judge(file, {
        agents: {
          agent2: { tools: { forbidden: ['random_number'] } },
          agent1: { tools: { forbidden: ['random_number'] } },
        },
        handoffs: { allowed: [{ from: 'agent2', to: 'agent1' }] },
      });
      expect(report.findings.map((f) => `${f.rule} ${f.agent ?? '-'}: ${f.message}`)).toEqual([
        'handoffs.allowed -: handoffs not on the allowed list: agent1 -> agent2 (call call_oEA0MnUXCwKevx8txteoopNL); allowed: agent2 -> agent1',
        'agents.agent1.tools.forbidden agent1: called forbidden tools: random_number (call call_vwqy7HyGGnNht9NNfxMnnouY)',
      ]);
    });
  },
);

describeCorpus('the Phoenix sub-agent: pxi.turn calls call_subagent, ServerAgent.iter runs inside it', () => {
  const file = 'openinference-phoenix-pxi/pxi-turn-subagent.otlp.json';
  const SUB = 'ServerAgent.iter';

  it('the sub-agent call is the caller’s, the seventeen calls inside it the sub-agent’s', () => {
    const report = judge(file, {
      agents: {
        'pxi.turn': { tools: { allowed: ['call_subagent'] }, efficiency: { maxCalls: 1 } },
        [SUB]: {
          tools: {
            allowed: ['load_skill', 'read_skill_resource', 'bash'],
            counts: { bash: { min: 13, max: 13 } },
          },
          efficiency: { maxCalls: 17 },
        },
      },
      efficiency: { maxCalls: 18 },
    });
    expect(report.findings).toEqual([]);
  });

  it('each call counted once: one under each budget fails', () => {
    const report = judge(file, {
      agents: { [SUB]: { efficiency: { maxCalls: 16 } } },
      efficiency: { maxCalls: 17 },
    });
    expect(report.findings.map((f) => `${f.rule}: ${f.message.split(' (')[0]}`)).toEqual([
      'efficiency.budget: 18 calls, budget 17',
      `agents.${SUB}.efficiency.budget: 17 calls, budget 16`,
    ]);
  });

  it('"*" judges both agents: bash is forbidden to the sub-agent only where it ran', () => {
    const report = judge(file, { agents: { '*': { tools: { forbidden: ['bash'] } } } });
    expect(outcomes(report)).toEqual([
      'agents.pxi.turn.tools.forbidden:pass',
      `agents.${SUB}.tools.forbidden:fail`,
    ]);
    expect(report.findings[0]?.agent).toBe(SUB);
  });
});

describeCorpus(
  'the A2A supervisor: an unnamed supervisor whose query_detector call runs a LangGraph detector',
  () => {
    const file = 'langgraph-agntcy-openllmetry/noc-interfaces-r1-status.otlp.json';

    it('the detector’s pyATS calls are LangGraph’s; the supervisor’s call belongs to no named agent', () => {
      const report = judge(file, {
        agents: {
          LangGraph: {
            tools: {
              allowed: ['pyats_list_devices', 'pyats_run_show_command'],
              forbidden: ['query_detector'],
            },
            efficiency: { maxCalls: 5 },
          },
        },
      });
      expect(report.findings).toEqual([]);
      expect(outcomes(report)).toEqual([
        'agents.LangGraph.no_unexpected_tool:pass',
        'agents.LangGraph.tools.forbidden:pass',
        'agents.LangGraph.efficiency.budget:pass',
      ]);
    });

    it('a supervisor rule by a name the trace never gives is inconclusive, saying which agents ran', () => {
      const report = judge(file, { agents: { supervisor: { tools: { allowed: ['query_detector'] } } } });
      expect(report.verdict).toBe('inconclusive');
      expect(report.findings[0]).toMatchObject({
        rule: 'agents.supervisor.tools.allowed',
        inconclusive: true,
      });
      expect(report.findings[0]?.message).toContain('agents that ran: LangGraph');
    });
  },
);
