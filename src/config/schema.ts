/**
 * Every option of toolpath's three entry points, with its one name and its one default: the
 * in-process processor (`trajectoryProcessor`), the collector adapter (`TraceAdapter`) and
 * `toolpath serve`'s YAML file. The TypeScript options and the YAML take the same names; durations
 * are written either way (`30s` or `30000`). A section shared by two entry points is one schema
 * here, used by both; one whose defaults differ (the processor holds less than the adapter) is two.
 *
 * To add an option: add it to the section's schema with `.default()` and `.meta({ description })`;
 * the types, the validation, `toolpath schema --config` and docs/reference.md follow from here.
 */
import { z } from 'zod';
import { count, duration, endpoint, heapShare, positiveDuration } from './values.js';

const MiB = 2 ** 20;

/** `meta` of an option whose default is computed at start: how the reference states it. */
const computedDefault = (description: string, defaultText: string) => ({ description, defaultText });

/** Conversations (`scope: conversation` scenarios): the same on every entry point. */
export const conversationsSchema = z.strictObject({
  idleTimeout: positiveDuration.default(300_000).meta({
    description:
      'A conversation with no new trace for this long is judged final and let go; until then each trace gets a provisional report (a long one is judged again at sizes growing by a sixteenth).',
  }),
  maxConversations: count().default(10_000).meta({
    description: 'Conversations held at once; past it the one idle longest is judged final early (counted).',
  }),
  maxCalls: count().default(100_000).meta({
    description:
      'Calls held per conversation; a trace that would pass it has the conversation judged final first (counted).',
  }),
});

/**
 * `conversations`: the state kept per conversation, or `false` to keep none (conversation
 * scenarios are then judged on each trace alone, inconclusive where the trace has a conversation id).
 */
export const conversationsOption = z.union([z.literal(false), conversationsSchema]).prefault({});

/** The processor's caps and waits (`trajectoryProcessor({ limits })`). */
export const processorLimitsSchema = z.strictObject({
  maxTraces: count().default(1_000).meta({
    description: 'Agent traces buffered at once; when full the oldest goes on unjudged (counted `evicted`).',
  }),
  maxSpansPerTrace: count().default(10_000).meta({
    description: 'Spans buffered per trace; the rest pass straight on and the trace is judged as incomplete.',
  }),
  maxSpans: count().default(100_000).meta({
    description: 'Spans buffered in all, waiting traces included; the oldest traces make room.',
  }),
  maxBufferedBytes: z
    .union([count(), z.literal(Number.POSITIVE_INFINITY)])
    .default(() => heapShare(256 * MiB, 1 / 4))
    .meta(
      computedDefault(
        'The heap the buffered spans hold, estimated (two bytes a character plus fixed costs); past it the oldest other traces go on unjudged.',
        '256 MiB, or a quarter of the V8 heap limit when that is less',
      ),
    ),
  maxOpenTraces: count().default(100_000).meta({
    description: 'Traces without agent spans followed for completion at once (a few dozen bytes each).',
  }),
  traceTimeout: positiveDuration.default(300_000).meta({
    description: 'A trace still open this long after its first span is judged as incomplete.',
  }),
  inlineMaxSpans: count(0).default(256).meta({
    description:
      'A trace of at most this many spans is judged in `onEnding` of its local root (its events go onto that span); 0 keeps all judging off span end. Not with `worker: true`.',
  }),
  lateWindow: duration.default(600_000).meta({
    description: "How long a judged trace's id is remembered, so its late spans follow its decision.",
  }),
  maxJudgedTraceIds: count().default(1_000_000).meta({
    description:
      'Judged trace ids remembered at once (about 80 bytes each); past it the oldest are forgotten early.',
  }),
  workerTimeout: positiveDuration.default(60_000).meta({
    description:
      'With `worker: true`: a batch the worker keeps longer than this stops it; its traces go on unjudged, counted.',
  }),
});

/** When the adapter judges a trace (`decision`, TypeScript and YAML alike). */
export const decisionSchema = z.strictObject({
  wait: duration.default(30_000).meta({
    description:
      'A trace is judged at most this long after its first span arrived; a span of an unknown trace that ended more than `wait + lateWindow` ago is dropped as `late_unknown`.',
  }),
  waitAfterRoot: duration.default(2_000).meta({
    description: 'A trace is judged this long after its root span arrived.',
  }),
  lateWindow: duration.default(600_000).meta({
    description: "How long a judged trace's id is remembered, so its late spans follow its decision.",
  }),
});

/** The adapter's caps (`TraceAdapter({ limits })`). */
export const adapterLimitsSchema = z.strictObject({
  maxTraces: count().default(10_000).meta({ description: 'Traces buffered at once.' }),
  maxSpansPerTrace: count().default(10_000).meta({ description: 'Spans buffered per trace.' }),
  maxSpans: count().default(1_000_000).meta({ description: 'Spans buffered in all.' }),
  maxBufferedBytes: count()
    .default(() => heapShare(512 * MiB, 1 / 2))
    .meta(
      computedDefault(
        'The heap the buffered traces hold, estimated; at or over it requests are refused (429) until judging frees room.',
        '512 MiB, or half the V8 heap limit when that is less',
      ),
    ),
  maxJudgedTraceIds: count().default(1_000_000).meta({
    description: 'Judged trace ids remembered for `decision.lateWindow` at most (about 80 bytes each).',
  }),
});

/** Which received spans go on to the next hop beside the evaluation spans. */
export const forwardSpansSchema = z.enum(['none', 'sampled', 'all']).default('none').meta({
  description: 'Received spans forwarded: none, those of traces kept by risk sampling, or all.',
});

/** Durable mode (`storage`, TypeScript and YAML alike): docs/durable.md. */
export const storageSchema = z
  .strictObject({
    directory: z.string().min(1).meta({ description: 'Where the span log is kept.' }),
    maxBytes: count()
      .default(2 ** 30)
      .meta({
        description:
          'Requests are refused (429 / UNAVAILABLE) while the span log holds this much; at least 1 MiB in a file.',
      }),
  })
  .meta({ description: 'Durable mode: every span answered 200 is on disk first; a crash loses none.' });

/** `serve`'s caps: the adapter's, and those of its receivers. */
const serveLimitsSchema = adapterLimitsSchema.extend({
  maxRequestBytes: count()
    .default(20 * MiB)
    .meta({ description: 'An export request larger than this (after decompression) is refused (413).' }),
  maxConnections: count().default(1_000).meta({
    description:
      'Open connections over both receivers (fewer if the open-file limit leaves less room); at the cap a new one closes the longest-idle one.',
  }),
});

const listener = z.strictObject({ endpoint });

/** OTLP protocols, as `OTEL_EXPORTER_OTLP_PROTOCOL` names them. */
export const otlpProtocolSchema = z.enum(['http/json', 'http/protobuf', 'grpc']);

/** The protocol when neither the file nor `OTEL_EXPORTER_OTLP_PROTOCOL` names one. */
export const DEFAULT_OTLP_PROTOCOL = 'http/protobuf';

/** `diag` levels, as `OTEL_LOG_LEVEL` names them. */
export const logLevelSchema = z.enum(['none', 'error', 'warn', 'info', 'debug', 'verbose', 'all']);

/** The level when neither the file nor `OTEL_LOG_LEVEL` names one. */
export const DEFAULT_LOG_LEVEL = 'warn';

/** The configuration file of `toolpath serve --config toolpath.yaml`. */
export const serveConfigSchema = z.strictObject({
  receivers: z
    .strictObject({
      otlp: z
        .strictObject({
          http: listener
            .nullable()
            .default({ endpoint: { host: '127.0.0.1', port: 4318 } })
            .meta({
              description: 'The OTLP/HTTP receiver (`endpoint: host:port`), or null for none.',
            }),
          grpc: listener
            .nullable()
            .default({ endpoint: { host: '127.0.0.1', port: 4317 } })
            .meta({
              description: 'The OTLP/gRPC receiver (`endpoint: host:port`), or null for none.',
            }),
        })
        .prefault({}),
      idleTimeout: positiveDuration.default(60_000).meta({
        description: 'A connection with no request, or a request that stops arriving, is closed after this.',
      }),
    })
    .prefault({}),
  scenarios: z.array(z.string().min(1)).default([]).meta({
    description: 'Scenario files or globs; none: the built-in checks that need no tool names.',
  }),
  judges: z.string().min(1).optional().meta({
    description:
      'A module (.js, .mjs) whose default export lists judges, run after the rules on the scenarios they name.',
  }),
  exporters: z
    .strictObject({
      otlp: z
        .strictObject({
          endpoint: z
            .url({
              error: (issue) =>
                `expected a URL like http://collector:4318; got ${JSON.stringify(issue.input)}`,
            })
            .optional()
            .meta({
              description:
                'The next hop; else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_EXPORTER_OTLP_ENDPOINT`.',
            }),
          protocol: otlpProtocolSchema.optional().meta({
            description: `http/json, http/protobuf or grpc; else \`OTEL_EXPORTER_OTLP_PROTOCOL\`, else ${DEFAULT_OTLP_PROTOCOL}.`,
          }),
          headers: z.record(z.string(), z.string()).default({}).meta({
            description: 'Sent with every export, over those of `OTEL_EXPORTER_OTLP_HEADERS`.',
          }),
        })
        .optional(),
    })
    .prefault({}),
  forward: z.strictObject({ spans: forwardSpansSchema }).prefault({}),
  decision: decisionSchema.prefault({}),
  conversations: conversationsSchema.prefault({}),
  limits: serveLimitsSchema.prefault({}),
  sampling: z
    .strictObject({
      ratio: z.number().min(0).max(1).optional().meta({
        description: 'Share (0..1) of traces with no risk that are kept, chosen by trace id; none: keep all.',
      }),
      keepAttributes: z
        .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
        .optional()
        .meta({ description: 'Keep a trace when a span has this attribute (with this value; `true`: any).' }),
      keepTools: z.array(z.string()).optional().meta({
        description: "Tools whose every call keeps its trace, beside scenarios' irreversible tools.",
      }),
    })
    .optional()
    .meta({ description: 'Risk sampling of what is forwarded: see docs/in-process.md.' }),
  redact: z
    .union([
      z.literal(false),
      z.strictObject({
        keepFields: z
          .array(z.string())
          .optional()
          .meta({ description: 'Fields whose values are kept as captured.' }),
        hashFields: z
          .array(z.string())
          .optional()
          .meta({ description: 'Fields whose values are replaced by a keyed hash.' }),
        // The same key on every adapter (e.g. from an env variable) hashes an id the same everywhere.
        hashKey: z.string().min(16).optional().meta({
          description:
            'HMAC key (16+ characters); the same on every adapter hashes an id alike. Default: random.',
        }),
      }),
    ])
    .optional()
    .meta({
      description: 'Redaction of values in findings; default: every argument and result value redacted.',
    }),
  metrics: z
    .strictObject({
      prometheus: z
        .strictObject({ endpoint })
        .optional()
        .meta({ description: 'A Prometheus scrape endpoint (`endpoint: host:port`).' }),
    })
    .prefault({}),
  reports: z
    .strictObject({
      file: z
        .string()
        .min(1)
        .optional()
        .meta({ description: 'Reports as JSON lines, appended to this file.' }),
      traceDir: z.string().min(1).optional().meta({
        description:
          'Where the spans of judged traces are stored, for `toolpath promote TRACE_ID --reports FILE`.',
      }),
      keepTraces: z
        .enum(['failed', 'all'])
        .default('failed')
        .meta({ description: 'Which traces `traceDir` keeps.' }),
      maxTraceFiles: count(0)
        .default(1_000)
        .meta({ description: 'Trace files kept in `traceDir`; the oldest go first.' }),
    })
    .prefault({}),
  auth: z
    .strictObject({
      bearerToken: z
        .string()
        .min(1)
        .optional()
        .meta({ description: 'Requests without this bearer token are refused (401).' }),
    })
    .prefault({}),
  // A span log under 1 MiB is a typo in a file; the TypeScript options allow it for tests of the log itself.
  storage: storageSchema
    .refine((storage) => storage.maxBytes >= MiB, {
      message: `expected an integer >= ${MiB}`,
      path: ['maxBytes'],
    })
    .optional(),
  logLevel: logLevelSchema.optional().meta({
    description: `The level of toolpath's own diagnostics on stderr; else \`OTEL_LOG_LEVEL\`, else ${DEFAULT_LOG_LEVEL}.`,
  }),
});

/** A validated `toolpath serve` configuration, defaults filled in. */
export type ServeConfig = z.output<typeof serveConfigSchema>;
