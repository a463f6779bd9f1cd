/**
 * toolpath's own metrics, through the OpenTelemetry metrics API (a no-op until the app gives a
 * MeterProvider, or sets a global one). Names are dot-separated with no `total` suffix.
 */
import {
  type BatchObservableCallback,
  type Counter,
  diag,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
} from '@opentelemetry/api';
import type { Report } from '../model/report.js';
import { TOOLPATH_VERSION } from '../model/version.js';
import type { DropReason } from './trace-buffer.js';

/** What a front door holds, for the buffer gauges. */
export interface BufferLevels {
  traces: number;
  spans: number;
  /** As estimated for `limits.maxBufferedBytes` (held-bytes.ts). */
  bytes: number;
}

/** The instruments, created once per processor or adapter. */
export class ToolpathMetrics {
  private readonly meter: Meter;
  private readonly evaluations: Counter;
  private readonly findings: Counter;
  private readonly toolCalls: Histogram;
  private readonly duration: Histogram;
  private readonly dropped: Counter;
  private readonly sampled: Counter;
  private readonly errors: Counter;
  private readonly refused: Counter;
  private readonly connectionsEvicted: Counter;
  private readonly conversationsEvicted: Counter;
  private readonly storageDamage: Counter;

  constructor(meterProvider: MeterProvider = metrics.getMeterProvider()) {
    const meter = meterProvider.getMeter('toolpath', TOOLPATH_VERSION);
    this.meter = meter;
    this.evaluations = meter.createCounter('toolpath.evaluations', {
      description: 'Trajectories evaluated, by scenario and verdict.',
      unit: '{evaluation}',
    });
    this.findings = meter.createCounter('toolpath.findings', {
      description: 'Findings, by scenario, rule and severity.',
      unit: '{finding}',
    });
    this.toolCalls = meter.createHistogram('toolpath.trajectory.tool_calls', {
      description: 'Tool calls per evaluated trajectory.',
      unit: '{call}',
      advice: { explicitBucketBoundaries: [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024] },
    });
    this.duration = meter.createHistogram('toolpath.evaluation.duration', {
      description: 'Time to normalize a trace and evaluate it against every scenario that applies.',
      unit: 's',
      advice: {
        explicitBucketBoundaries: [
          0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5,
        ],
      },
    });
    this.dropped = meter.createCounter('toolpath.traces.dropped', {
      description: 'Traces or spans let go without being judged or exported, by reason.',
      unit: '{item}',
    });
    this.sampled = meter.createCounter('toolpath.traces.sampled', {
      description: 'Sampling decisions on judged traces, by reason and whether the trace was kept.',
      unit: '{trace}',
    });
    this.errors = meter.createCounter('toolpath.evaluation.errors', {
      description: 'Evaluations that threw (the trace is still passed on), by stage.',
      unit: '{error}',
    });
    this.conversationsEvicted = meter.createCounter('toolpath.conversations.evicted', {
      description:
        'Conversations judged final before going idle, by reason: max_conversations, max_calls (limits), shutdown, or worker_exit (the judging worker holding them exited; judged inconclusive).',
      unit: '{conversation}',
    });
    this.refused = meter.createCounter('toolpath.connections.refused', {
      description:
        'Connections closed as soon as accepted: the connection cap was reached and none could be closed to make room, by receiver.',
      unit: '{connection}',
    });
    this.connectionsEvicted = meter.createCounter('toolpath.connections.evicted', {
      description:
        'Connections closed, longest idle first, to make room for a new one at the connection cap (limits.maxConnections or the open-file limit), by receiver and state (idle, receiving).',
      unit: '{connection}',
    });
    this.storageDamage = meter.createCounter('toolpath.storage.damaged', {
      description:
        'Bytes of the durable log found damaged at start, by what was done: tail_cut (a torn tail cut off) or record_skipped (a bad record skipped, the records after it read).',
      unit: 'By',
    });
  }

  /** Damage found in the durable log as it was read back. */
  recordStorageDamage(kind: 'tail_cut' | 'record_skipped', bytes: number): void {
    if (bytes > 0) guarded(() => this.storageDamage.add(bytes, { 'toolpath.damage.kind': kind }));
  }

  /** A connection refused over the adapter's connection cap. */
  recordRefusedConnection(receiver: string): void {
    guarded(() => this.refused.add(1, { 'toolpath.receiver': receiver }));
  }

  /** A connection closed to make room for a new one at the connection cap. */
  recordEvictedConnection(receiver: string, state: string): void {
    guarded(() =>
      this.connectionsEvicted.add(1, { 'toolpath.receiver': receiver, 'toolpath.connection.state': state }),
    );
  }

  /** A conversation let go before it went idle. */
  recordConversationEviction(reason: string): void {
    guarded(() => this.conversationsEvicted.add(1, { 'toolpath.eviction.reason': reason }));
  }

  /** One scenario's report. A provisional one (a conversation that may go on) counts for nothing. */
  recordReport(report: Report): void {
    if (report.final === false) return;
    guarded(() => {
      const scenario = report.scenario.id;
      this.evaluations.add(1, { 'toolpath.scenario.id': scenario, 'toolpath.verdict': report.verdict });
      for (const finding of report.findings) {
        this.findings.add(1, {
          'toolpath.scenario.id': scenario,
          'toolpath.finding.rule': finding.rule,
          'toolpath.finding.severity': finding.severity,
        });
      }
    });
  }

  /** One judged trajectory: its size and what judging it cost. */
  recordTrajectory(toolCalls: number, seconds: number): void {
    guarded(() => {
      this.toolCalls.record(toolCalls);
      this.duration.record(seconds);
    });
  }

  recordDrop(reason: DropReason, count: number): void {
    guarded(() => this.dropped.add(count, { 'toolpath.drop.reason': reason }));
  }

  recordSampling(reason: string, kept: boolean): void {
    guarded(() =>
      this.sampled.add(1, { 'toolpath.sampling.reason': reason, 'toolpath.sampling.kept': kept }),
    );
  }

  recordError(stage: string): void {
    guarded(() => this.errors.add(1, { 'toolpath.error.stage': stage }));
  }

  /**
   * Gauges of what is held, read from `levels` when a reader collects: `toolpath.buffer.traces`,
   * `toolpath.buffer.spans` and `toolpath.buffer.bytes` (what the caps are checked against, so an
   * operator sees refusals or evictions coming). Returns what stops them (at shutdown).
   */
  observeBuffer(levels: () => BufferLevels): () => void {
    let stop = () => {};
    guarded(() => {
      const traces = this.meter.createObservableGauge('toolpath.buffer.traces', {
        description: 'Traces buffered or waiting to be judged.',
        unit: '{trace}',
      });
      const spans = this.meter.createObservableGauge('toolpath.buffer.spans', {
        description: 'Spans held until their trace is judged.',
        unit: '{span}',
      });
      const bytes = this.meter.createObservableGauge('toolpath.buffer.bytes', {
        description: 'Heap the held spans take, as estimated for limits.maxBufferedBytes.',
        unit: 'By',
      });
      const gauges = [traces, spans, bytes];
      const observe: BatchObservableCallback = (result) => {
        const now = levels();
        result.observe(traces, now.traces);
        result.observe(spans, now.spans);
        result.observe(bytes, now.bytes);
      };
      this.meter.addBatchObservableCallback(observe, gauges);
      stop = () => guarded(() => this.meter.removeBatchObservableCallback(observe, gauges));
    });
    return stop;
  }
}

/**
 * A meter that throws (a broken SDK or a custom provider) costs the metric, never the spans or the
 * judgement around it: every caller counts before it passes spans on.
 */
function guarded(record: () => void): void {
  try {
    record();
  } catch (error) {
    diag.error('toolpath: recording a metric failed', error);
  }
}
