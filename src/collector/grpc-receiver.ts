/**
 * OTLP/gRPC receiver: `opentelemetry.proto.collector.trace.v1.TraceService/Export` on
 * @grpc/grpc-js, so the adapter can sit behind the Collector's `loadbalancing` exporter (which
 * speaks OTLP/gRPC only). The message arrives as raw bytes and goes through our own protobuf
 * decoder, so gRPC and OTLP/HTTP protobuf decode, and answer, identically ({@link exportOutcome}).
 *
 * Status codes per the OTLP specification (opentelemetry-proto docs/specification.md,
 * "OTLP/gRPC Response" and "OTLP/gRPC Throttling"): bad data INVALID_ARGUMENT with a BadRequest
 * detail; a full or closing adapter UNAVAILABLE with a RetryInfo detail (the code the spec says
 * a server SHOULD use for backpressure, and one every client retries); over the size limit
 * RESOURCE_EXHAUSTED without RetryInfo (which the spec makes non-retryable, as HTTP 413 is);
 * a missing or wrong bearer token UNAUTHENTICATED.
 *
 * Connections are accepted by a listener of our own and handed to grpc-js (its connection
 * injector), so they can be counted against the connection cap, which an interceptor tells of
 * each call (arriving, then being answered, then done); one with no call in flight
 * for the idle timeout is closed by grpc-js (`grpc.max_connection_idle_ms`, which also closes a
 * socket that never sends the HTTP/2 preface), and one whose call stops arriving is closed here.
 */
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { diag } from '@opentelemetry/api';
import type { AdmittedConnection } from './connection-limit.js';
import {
  decodeExportTraceProtobuf,
  decodeExportTraceResponse,
  encodeExportTraceResponse,
  type PartialSuccess,
} from './otlp-proto.js';
import {
  acknowledged,
  bearerMatches,
  DEFAULT_IDLE_TIMEOUT_MS,
  decodeOptionsFor,
  encodeRpcStatus,
  exportOutcome,
  hostForUrl,
  type ReceiverOptions,
  type RpcStatus,
  type RunningReceiver,
} from './receiver-common.js';

/** The gRPC method path of OTLP trace export. */
export const TRACE_EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

/** What the handler answers with; serialized by {@link encodeExportTraceResponse}. */
export interface ExportResponse {
  partial?: PartialSuccess;
}

/**
 * The TraceService definition with pass-through request bytes (our decoder runs in the handler,
 * where a bad request can be answered with a precise INVALID_ARGUMENT rather than grpc-js's
 * generic deserialization error).
 */
export const traceServiceDefinition: grpc.ServiceDefinition = {
  Export: {
    path: TRACE_EXPORT_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: (bytes: Uint8Array) => Buffer.from(bytes),
    requestDeserialize: (bytes: Buffer) => bytes,
    responseSerialize: (response: ExportResponse) => asBuffer(encodeExportTraceResponse(response.partial)),
    // For clients (tests): the response as the handler gave it.
    responseDeserialize: (bytes: Buffer): ExportResponse => {
      const { partialSuccess } = decodeExportTraceResponse(bytes);
      return partialSuccess === undefined ? {} : { partial: partialSuccess };
    },
  } satisfies grpc.MethodDefinition<Uint8Array, ExportResponse>,
};

/** How long close() lets calls in flight finish before cutting them. */
const CLOSE_GRACE_MS = 5000;

/**
 * Starts the OTLP/gRPC receiver (plaintext; put TLS in front if it leaves the host). Incoming
 * `grpc-encoding: gzip` (and deflate) is inflated by grpc-js, which enforces the size limit on
 * the inflated message as well. Resolves once bound; rejects if it cannot bind.
 */
export function startGrpcReceiver(options: ReceiverOptions): Promise<RunningReceiver> {
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  /**
   * Open connections by peer (`host:port`, as a call names it), to close one whose call stalled
   * and to tell the connection cap which are idle.
   */
  const sockets = new Map<string, Peer>();
  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxRequestBytes,
    'grpc.max_connection_idle_ms': idleMs,
    interceptors: [closeStalled(idleMs, sockets)],
  });
  server.addService(traceServiceDefinition, {
    Export: (
      call: grpc.ServerUnaryCall<Buffer, ExportResponse>,
      callback: grpc.sendUnaryData<ExportResponse>,
    ) => {
      exportCall(call, options)
        .catch((error: unknown) => {
          diag.error('toolpath: the OTLP/gRPC receiver failed on a call', error);
          return failure(grpc.status.INTERNAL, { code: grpc.status.INTERNAL, message: 'internal error' });
        })
        .then((answer) => {
          if (answer instanceof OtlpCallError) callback(answer);
          else callback(null, answer);
        });
    },
  });
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const listener = createServer((socket) => {
    const connection = options.connections?.admit(socket, 'grpc');
    if (options.connections && !connection) return;
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    sockets.set(peer, { socket, ...(connection && { connection }) });
    socket.once('close', () => sockets.delete(peer));
    injector.injectConnection(socket);
  });
  return new Promise((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port, options.host, () => {
      listener.off('error', reject);
      listener.on('error', (error) => diag.error('toolpath: OTLP/gRPC listener error', error));
      const port = (listener.address() as { port: number }).port;
      resolve({
        url: `http://${hostForUrl(options.host)}:${port}`,
        port,
        close: () => closeServer(server, listener, sockets),
      });
    });
  });
}

/**
 * Closes the connection of a call whose request (message and end of stream) has not all arrived
 * `idleMs` after it started: grpc-js answers such a call only when the client sets a deadline,
 * and even then keeps the stream, and so the connection, for as long as the client does.
 */
function closeStalled(idleMs: number, sockets: ReadonlyMap<string, Peer>): grpc.ServerInterceptor {
  return (_method, call) => {
    const peer = sockets.get(call.getPeer());
    // The connection cap sees the call as arriving until its half-close, then as being answered.
    const progress = peer?.connection?.request();
    return new grpc.ServerInterceptingCall(call, {
      start: (next) => {
        const timer = setTimeout(() => {
          const details = `the request did not arrive within receivers.idleTimeout (${idleMs} ms)`;
          call.sendStatus({ code: grpc.status.DEADLINE_EXCEEDED, details, metadata: new grpc.Metadata() });
          peer?.socket.destroy();
        }, idleMs);
        timer.unref();
        const listener = new grpc.ServerListenerBuilder()
          .withOnReceiveHalfClose((done) => {
            clearTimeout(timer);
            progress?.received();
            done();
          })
          .withOnCancel(() => {
            clearTimeout(timer);
            progress?.done();
          })
          .build();
        next(listener);
      },
      sendStatus: (status, next) => {
        progress?.done();
        next(status);
      },
    });
  };
}

/** The answer to one Export call: a response, or the error to fail it with. */
async function exportCall(
  call: grpc.ServerUnaryCall<Buffer, ExportResponse>,
  options: ReceiverOptions,
): Promise<ExportResponse | OtlpCallError> {
  const header = call.metadata.get('authorization')[0];
  if (!bearerMatches(options.bearerToken, typeof header === 'string' ? header : undefined)) {
    const message = 'missing or wrong bearer token';
    return failure(grpc.status.UNAUTHENTICATED, { code: grpc.status.UNAUTHENTICATED, message });
  }
  const bytes = call.request;
  // grpc-js already refuses larger messages (compressed or inflated); checked again in case its options change.
  if (bytes.length > options.maxRequestBytes) {
    const message = `message too large: the limit is ${options.maxRequestBytes} bytes`;
    return failure(grpc.status.RESOURCE_EXHAUSTED, { code: grpc.status.RESOURCE_EXHAUSTED, message });
  }
  const outcome = await acknowledged(
    exportOutcome(options.ingest, decodeExportTraceProtobuf(bytes, decodeOptionsFor(options.ingest)), {
      format: 'protobuf',
      bytes,
    }),
  );
  switch (outcome.kind) {
    case 'accepted':
      return outcome.partial === undefined ? {} : { partial: outcome.partial };
    case 'bad_data':
      return failure(grpc.status.INVALID_ARGUMENT, outcome.status);
    case 'unavailable':
      return failure(grpc.status.UNAVAILABLE, outcome.status);
    case 'failed':
      return failure(grpc.status.INTERNAL, outcome.status);
  }
}

/**
 * A gRPC error carrying `status` as the `grpc-status-details-bin` trailer (the google.rpc.Status
 * that Go's `status.FromError`, and so the Collector's exporter, reads RetryInfo from).
 */
function failure(code: grpc.status, status: RpcStatus): OtlpCallError {
  return new OtlpCallError(code, status);
}

/** A failed Export call, as grpc-js sends it: code, details, and the Status trailer. */
class OtlpCallError extends Error implements grpc.ServerErrorResponse {
  readonly code: grpc.status;
  readonly details: string;
  readonly metadata = new grpc.Metadata();
  constructor(code: grpc.status, status: RpcStatus) {
    super(status.message);
    this.code = code;
    this.details = status.message;
    this.metadata.set('grpc-status-details-bin', asBuffer(encodeRpcStatus({ ...status, code })));
  }
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** An open connection: its socket, and its place under the connection cap when there is one. */
interface Peer {
  socket: Socket;
  connection?: AdmittedConnection;
}

function closeServer(server: grpc.Server, listener: NetServer, sockets: Map<string, Peer>): Promise<void> {
  listener.close();
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      server.forceShutdown();
      for (const { socket } of sockets.values()) socket.destroy();
      resolve();
    }, CLOSE_GRACE_MS);
    force.unref();
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}
