/**
 * The OTLP trace messages on the wire: our own protobuf schema (written from opentelemetry-proto
 * collector/trace/v1, trace/v1, common/v1, resource/v1, since no npm package ships current
 * .proto files and `@opentelemetry/otlp-transformer` only serializes) and the response codec
 * built on it. The leaf readers of the one-pass decoder are in `otlp-proto-wire.ts`. The round
 * trips against otlp-transformer's serializer (test/collector) keep them in step.
 */
import protobuf from 'protobufjs';

/** The OTLP messages, field numbers as in opentelemetry-proto 1.x, one source per proto package. */
export const OTLP_TRACE_PROTO: readonly string[] = [
  `syntax = "proto3";
package opentelemetry.proto.common.v1;
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope {
  string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4;
}
message InstrumentationLibrary { string name = 1; string version = 2; }`,
  `syntax = "proto3";
package opentelemetry.proto.resource.v1;
message Resource {
  repeated opentelemetry.proto.common.v1.KeyValue attributes = 1; uint32 dropped_attributes_count = 2;
}`,
  `syntax = "proto3";
package opentelemetry.proto.trace.v1;
message ResourceSpans {
  opentelemetry.proto.resource.v1.Resource resource = 1;
  repeated ScopeSpans scope_spans = 2;
  string schema_url = 3;
  // Reserved since OTLP 0.19; written by producers older than OTLP 0.15 (read as the JSON decoder does).
  repeated InstrumentationLibrarySpans instrumentation_library_spans = 1000;
}
message ScopeSpans {
  opentelemetry.proto.common.v1.InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3;
}
message InstrumentationLibrarySpans {
  opentelemetry.proto.common.v1.InstrumentationLibrary instrumentation_library = 1;
  repeated Span spans = 2;
  string schema_url = 3;
}
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  enum SpanKind {
    SPAN_KIND_UNSPECIFIED = 0; SPAN_KIND_INTERNAL = 1; SPAN_KIND_SERVER = 2;
    SPAN_KIND_CLIENT = 3; SPAN_KIND_PRODUCER = 4; SPAN_KIND_CONSUMER = 5;
  }
  SpanKind kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated opentelemetry.proto.common.v1.KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  message Event {
    fixed64 time_unix_nano = 1; string name = 2;
    repeated opentelemetry.proto.common.v1.KeyValue attributes = 3; uint32 dropped_attributes_count = 4;
  }
  repeated Event events = 11; uint32 dropped_events_count = 12;
  message Link {
    bytes trace_id = 1; bytes span_id = 2; string trace_state = 3;
    repeated opentelemetry.proto.common.v1.KeyValue attributes = 4; uint32 dropped_attributes_count = 5;
    fixed32 flags = 6;
  }
  repeated Link links = 13; uint32 dropped_links_count = 14;
  Status status = 15;
}
message Status {
  reserved 1;
  string message = 2;
  enum StatusCode { STATUS_CODE_UNSET = 0; STATUS_CODE_OK = 1; STATUS_CODE_ERROR = 2; }
  StatusCode code = 3;
}`,
  `syntax = "proto3";
package opentelemetry.proto.collector.trace.v1;
message ExportTraceServiceRequest { repeated opentelemetry.proto.trace.v1.ResourceSpans resource_spans = 1; }
message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
message ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }`,
];

/** The parsed schema (protobufjs reflection; field names lowerCamelCase, as protobufjs converts them). */
export const otlpTraceRoot: protobuf.Root = OTLP_TRACE_PROTO.reduce(
  (root, source) => protobuf.parse(source, root).root,
  new protobuf.Root(),
);
const collector = 'opentelemetry.proto.collector.trace.v1';
/** `opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`. */
export const ExportTraceServiceRequest: protobuf.Type = otlpTraceRoot.lookupType(
  `${collector}.ExportTraceServiceRequest`,
);
/** `opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse`. */
export const ExportTraceServiceResponse: protobuf.Type = otlpTraceRoot.lookupType(
  `${collector}.ExportTraceServiceResponse`,
);
const ExportTracePartialSuccess = otlpTraceRoot.lookupType(`${collector}.ExportTracePartialSuccess`);

/** OTLP `partial_success`: how many spans were rejected and why. */
export interface PartialSuccess {
  rejectedSpans: number;
  errorMessage: string;
}

/**
 * An ExportTraceServiceResponse: the empty message (zero bytes) when every span was accepted,
 * else one carrying `partial_success`.
 */
export function encodeExportTraceResponse(partial?: PartialSuccess): Uint8Array {
  if (partial === undefined) return new Uint8Array(0);
  const partialSuccess = { rejectedSpans: partial.rejectedSpans, errorMessage: partial.errorMessage };
  return ExportTraceServiceResponse.encode({ partialSuccess }).finish();
}

/** Reads an ExportTraceServiceResponse (for clients and tests). Throws protobufjs's error on bad bytes. */
export function decodeExportTraceResponse(bytes: Uint8Array): { partialSuccess?: PartialSuccess } {
  const message = ExportTraceServiceResponse.decode(bytes) as protobuf.Message & { partialSuccess?: object };
  // Presence by own property: the decoded message's prototype answers every field with a default.
  if (!Object.hasOwn(message, 'partialSuccess') || message.partialSuccess == null) return {};
  const plain = ExportTracePartialSuccess.toObject(message.partialSuccess as protobuf.Message, {
    longs: Number,
    defaults: true,
  });
  return { partialSuccess: { rejectedSpans: plain.rejectedSpans, errorMessage: plain.errorMessage } };
}
