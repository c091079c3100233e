import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as GrpcServer, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';

/** A span as the receiver got it, whichever OTLP encoding it came in. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The service.name of its resource. */
  service: string;
}

export const SPAN_KIND = { server: 2, client: 3 } as const;

/**
 * A real OTLP trace receiver for the tests: OTLP/HTTP (POST /v1/traces, JSON or protobuf) and, once `startGrpc`
 * has run, OTLP/gRPC (TraceService/Export). It decodes the messages itself (the protobuf wire format read field by
 * field from opentelemetry-proto's trace.proto numbers, not with the exporter's own code), keeps every span and
 * answers an empty ExportTraceServiceResponse.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly contentTypes: string[] = [];
  readonly headers: IncomingMessage['headers'][] = [];
  private server?: Server;
  private grpc?: GrpcServer;
  private grpcPort?: number;

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const type = String(req.headers['content-type'] ?? '');
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        this.contentTypes.push(type);
        this.headers.push(req.headers);
        const body = Buffer.concat(chunks);
        try {
          this.spans.push(
            ...(type.includes('json') ? fromJson(JSON.parse(body.toString('utf8'))) : fromProtobuf(body)),
          );
        } catch (error) {
          res.writeHead(400).end(String(error));
          return;
        }
        if (type.includes('json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** The gRPC endpoint, once `startGrpc` has run. */
  get grpcUrl(): string {
    return `http://127.0.0.1:${this.grpcPort}`;
  }

  /** Also serves OTLP/gRPC: the TraceService's Export, its messages taken as bytes and decoded here. */
  async startGrpc(): Promise<this> {
    const bytes = (value: Buffer) => value;
    const service: ServiceDefinition = {
      Export: {
        path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
        requestStream: false,
        responseStream: false,
        requestSerialize: bytes,
        requestDeserialize: bytes,
        responseSerialize: bytes,
        responseDeserialize: bytes,
      },
    };
    this.grpc = new GrpcServer();
    this.grpc.addService(service, {
      Export: (
        call: { request: Buffer; metadata: { getMap(): Record<string, unknown> } },
        done: (error: null, reply: Buffer) => void,
      ) => {
        this.contentTypes.push('application/grpc');
        this.headers.push(call.metadata.getMap() as IncomingMessage['headers']);
        this.spans.push(...fromProtobuf(call.request));
        done(null, Buffer.alloc(0));
      },
    });
    this.grpcPort = await new Promise<number>((resolve, reject) =>
      this.grpc!.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) =>
        error ? reject(error) : resolve(port),
      ),
    );
    return this;
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  async stop(): Promise<void> {
    this.grpc?.forceShutdown();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

// OTLP JSON (the protobuf mapping with hex ids, as the OTLP/HTTP spec has it).

interface JsonValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
}
interface JsonKeyValue {
  key: string;
  value: JsonValue;
}

function fromJson(body: {
  resourceSpans?: Array<{
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: Array<{ spans?: Array<Record<string, any>> }>;
  }>;
}): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of body.resourceSpans ?? []) {
    const service = String(jsonAttributes(resourceSpans.resource?.attributes)['service.name'] ?? '');
    for (const scope of resourceSpans.scopeSpans ?? [])
      for (const span of scope.spans ?? [])
        out.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          startNs: BigInt(span.startTimeUnixNano),
          endNs: BigInt(span.endTimeUnixNano),
          attributes: jsonAttributes(span.attributes),
          statusCode: span.status?.code ?? 0,
          service,
        });
  }
  return out;
}

function jsonAttributes(list: JsonKeyValue[] | undefined): ReceivedSpan['attributes'] {
  const out: ReceivedSpan['attributes'] = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
  }
  return out;
}

// OTLP protobuf: ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1 }.

type Field = { no: number; varint?: bigint; bytes?: Buffer; fixed64?: Buffer };

function* fields(buf: Buffer): Generator<Field> {
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[at++];
      if (byte === undefined) throw new Error('truncated varint');
      result |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return result;
      shift += 7n;
    }
  };
  while (at < buf.length) {
    const tag = Number(varint());
    const no = tag >>> 3;
    switch (tag & 7) {
      case 0:
        yield { no, varint: varint() };
        break;
      case 1:
        yield { no, fixed64: buf.subarray(at, (at += 8)) };
        break;
      case 2: {
        const length = Number(varint());
        yield { no, bytes: buf.subarray(at, (at += length)) };
        break;
      }
      case 5:
        at += 4;
        break;
      default:
        throw new Error(`unsupported wire type ${tag & 7}`);
    }
  }
}

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of fields(body)) {
    if (resourceSpans.no !== 1) continue;
    let service = '';
    const spans: Buffer[] = [];
    for (const field of fields(resourceSpans.bytes!)) {
      if (field.no === 1)
        for (const attr of fields(field.bytes!))
          if (attr.no === 1) {
            const [key, value] = keyValue(attr.bytes!);
            if (key === 'service.name') service = String(value);
          }
      if (field.no === 2)
        for (const scoped of fields(field.bytes!)) if (scoped.no === 2) spans.push(scoped.bytes!);
    }
    for (const bytes of spans) out.push({ ...span(bytes), service });
  }
  return out;
}

function span(buf: Buffer): Omit<ReceivedSpan, 'service'> {
  const out: Omit<ReceivedSpan, 'service'> = {
    traceId: '',
    spanId: '',
    parentSpanId: '',
    name: '',
    kind: 0,
    startNs: 0n,
    endNs: 0n,
    attributes: {},
    statusCode: 0,
  };
  for (const field of fields(buf)) {
    if (field.no === 1) out.traceId = field.bytes!.toString('hex');
    else if (field.no === 2) out.spanId = field.bytes!.toString('hex');
    else if (field.no === 4) out.parentSpanId = field.bytes!.toString('hex');
    else if (field.no === 5) out.name = field.bytes!.toString('utf8');
    else if (field.no === 6) out.kind = Number(field.varint);
    else if (field.no === 7) out.startNs = field.fixed64!.readBigUInt64LE();
    else if (field.no === 8) out.endNs = field.fixed64!.readBigUInt64LE();
    else if (field.no === 9) {
      const [key, value] = keyValue(field.bytes!);
      out.attributes[key] = value;
    } else if (field.no === 15)
      for (const status of fields(field.bytes!)) if (status.no === 3) out.statusCode = Number(status.varint);
  }
  return out;
}

/** KeyValue { string key = 1; AnyValue value = 2 }; AnyValue: string 1, bool 2, int64 3, double 4. */
function keyValue(buf: Buffer): [string, string | number | boolean] {
  let key = '';
  let value: string | number | boolean = '';
  for (const field of fields(buf)) {
    if (field.no === 1) key = field.bytes!.toString('utf8');
    if (field.no === 2)
      for (const any of fields(field.bytes!)) {
        if (any.no === 1) value = any.bytes!.toString('utf8');
        else if (any.no === 2) value = any.varint !== 0n;
        else if (any.no === 3) value = Number(BigInt.asIntN(64, any.varint!));
        else if (any.no === 4) value = any.fixed64!.readDoubleLE();
      }
  }
  return [key, value];
}
