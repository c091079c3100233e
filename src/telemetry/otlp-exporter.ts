import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { OtlpConfig } from '../config/config.schema';

/** How long one export may take before it is given up (the batch is dropped, the next one tried). */
const EXPORT_TIMEOUT_MS = 10_000;

/**
 * The OTLP exporter of `telemetry.otlp.protocol`, loaded only when configured (the gRPC one brings @grpc/grpc-js,
 * pure JavaScript but not small). Over HTTP the traces go to `<endpoint>/v1/traces`, as with the SDK's
 * OTEL_EXPORTER_OTLP_ENDPOINT, unless the endpoint already ends with that path.
 */
export async function otlpExporter(config: OtlpConfig): Promise<SpanExporter> {
  const headers = Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k, String(v)]));
  if (config.protocol === 'grpc') {
    const [{ OTLPTraceExporter }, { Metadata }] = await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-grpc'),
      import('@grpc/grpc-js'),
    ]);
    const metadata = new Metadata();
    for (const [key, value] of Object.entries(headers)) metadata.set(key, value);
    return new OTLPTraceExporter({ url: config.endpoint, metadata, timeoutMillis: EXPORT_TIMEOUT_MS });
  }
  const options = { url: tracesUrl(config.endpoint), headers, timeoutMillis: EXPORT_TIMEOUT_MS };
  if (config.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(options);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(options);
}

/** The OTLP/HTTP traces URL of a base endpoint. */
export function tracesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
}

/**
 * An exporter that says when exports start failing and when they work again, once each (the SDK's own diagnostics
 * are silent by default): spans of a failed batch are lost, never retried into memory without bound.
 */
export class ReportingExporter implements SpanExporter {
  private failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly report: (state: 'failing' | 'recovered', reason?: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      const failed = result.code !== ExportResultCode.SUCCESS;
      if (failed !== this.failing) {
        this.failing = failed;
        this.report(failed ? 'failing' : 'recovered', result.error?.message);
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
