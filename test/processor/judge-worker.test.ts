/** WorkerJudge on its own: batches answered in order, a worker that cannot start, settling. */
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { type ReadableSpan, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import type { Judgement } from '../../src/index.js';
import { type BatchDone, WorkerJudge, workerEvaluatorOptions } from '../../src/processor/judge-worker.js';
import { packTraces } from '../../src/processor/span-pack.js';
import { REFUND_SCENARIO } from './vercel-agent.js';

let judges: WorkerJudge[] = [];
afterEach(async () => {
  for (const judge of judges) await judge.terminate();
  judges = [];
});

function workerJudge(...args: ConstructorParameters<typeof WorkerJudge>): WorkerJudge {
  const judge = new WorkerJudge(...args);
  judges.push(judge);
  return judge;
}

const collected: ReadableSpan[] = [];
const tracer = new TracerProvider({
  spanProcessors: [
    {
      onStart() {},
      onEnd: (span) => void collected.push(span),
      forceFlush: async () => {},
      shutdown: async () => {},
    },
  ],
}).getTracer('app');

/** One trace of an agent span and a call of a tool the scenario does not allow, made by a real tracer. */
interface Request {
  traceId: string;
  spans: ReadableSpan[];
  partlyPassedOn: boolean;
}

function request(): Request {
  collected.length = 0;
  const agent = tracer.startSpan('invoke_agent support', {
    attributes: { 'gen_ai.operation.name': 'invoke_agent' },
  });
  tracer
    .startSpan(
      'execute_tool delete_account',
      { attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'delete_account' } },
      trace.setSpan(ROOT_CONTEXT, agent),
    )
    .end();
  agent.end();
  return { traceId: agent.spanContext().traceId, spans: [...collected], partlyPassedOn: false };
}

/** Posts the traces as the processor does: their spans packed. */
const post = (judge: WorkerJudge, traces: Request[], done: BatchDone) =>
  judge.judge(
    traces.map(({ traceId, partlyPassedOn }) => ({ traceId, partlyPassedOn })),
    () => packTraces(traces.map((trace) => trace.spans)),
    done,
  );

const judged = (judge: WorkerJudge, traces: Request[]) =>
  new Promise<{ judgements?: Judgement[]; error?: Error }>((resolve) =>
    post(judge, traces, (judgements, error) => resolve({ judgements, error })),
  );

describe('WorkerJudge', () => {
  it('answers each batch with a judgement per trace, in order, without trajectories', async () => {
    const judge = workerJudge(workerEvaluatorOptions({ scenarios: [REFUND_SCENARIO] }));
    const batch = [request(), request()];
    const first = judged(judge, batch);
    const second = judged(judge, [request()]);
    const { judgements } = await first;
    expect(judgements?.map((judgement) => judgement.reports[0]?.traceId)).toEqual(
      batch.map((each) => each.traceId),
    );
    expect(judgements?.[0]?.reports[0]?.findings.map((finding) => finding.rule)).toContain('tools.allowed');
    expect(judgements?.[0]?.trajectory).toBeUndefined();
    expect(judgements?.[0]?.toolCalls).toBe(1);
    expect((await second).judgements).toHaveLength(1);
  });

  it('settles on the batches posted before, not on those posted after', async () => {
    const judge = workerJudge(workerEvaluatorOptions({ scenarios: [REFUND_SCENARIO] }));
    const answered: number[] = [];
    post(judge, [request()], () => answered.push(1));
    const settled = judge.settled();
    post(
      judge,
      Array.from({ length: 200 }, () => request()),
      () => answered.push(2),
    );
    await settled;
    expect(answered).toEqual([1]);
    await judge.settled();
    expect(answered).toEqual([1, 2]);
    expect(judge.inFlight).toBe(0);
  });

  it('stops a worker that keeps a batch past its deadline, answers the batch with why, and judges on', async () => {
    const judge = workerJudge(workerEvaluatorOptions({ scenarios: [REFUND_SCENARIO] }), 150);
    // Started and ready: the deadline counts from then, not from the thread's start.
    expect((await judged(judge, [request()])).judgements).toHaveLength(1);
    // Far more than 150 ms of judging in one batch.
    const heavy = Array.from({ length: 10_000 }, () => request());
    const late = await judged(judge, heavy);
    expect(late.judgements).toBeUndefined();
    expect(late.error?.message).toBe('toolpath: the judging worker kept a batch over 150 ms and was stopped');
    expect(judge.restarts).toBe(1);
    const next = await judged(judge, [request()]);
    expect(next.judgements?.[0]?.reports[0]?.verdict).toBe('fail');
  });

  it('answers a batch posted while it shuts down, at once and with why', async () => {
    const judge = workerJudge(workerEvaluatorOptions({ scenarios: [REFUND_SCENARIO] }));
    const first = judged(judge, [request()]);
    const terminating = judge.terminate();
    const second = judged(judge, [request()]);
    await terminating;
    expect((await first).judgements).toHaveLength(1);
    expect((await second).error?.message).toBe('toolpath: the judging worker was shut down');
    await judge.settled();
  });

  it('gives up on a worker that cannot start: every batch is answered with its error', async () => {
    // The main thread checks scenario files before it starts the worker; this one is gone by then.
    const judge = workerJudge({ scenarios: ['/nonexistent/scenario.yaml'] });
    const answers = await Promise.all([judged(judge, [request()]), judged(judge, [request()])]);
    for (const { judgements, error } of answers) {
      expect(judgements).toBeUndefined();
      expect(error?.message).toContain('/nonexistent/scenario.yaml');
    }
    // Three starts, then no more: a batch is then answered at once, with the error.
    let atOnce: Error | undefined;
    for (const deadline = Date.now() + 30_000; !atOnce && Date.now() < deadline; ) {
      let posted = false;
      post(judge, [request()], (_, error) => {
        if (!posted) atOnce = error;
      });
      posted = true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(judge.restarts).toBe(2);
    expect(atOnce?.message).toContain('/nonexistent/scenario.yaml');
  });
});
