import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Request } from 'express';
import type { GatewayConfig, OtlpConfig } from '../config/config.schema';
import type { AppLogger } from '../common/logging/logger';
import type { RequestTrace } from '../gateway/request-trace';
import type { Redactor } from '../request-log/redaction/redactor';
import { serverOf } from './gen-ai-provider';
import { otlpExporter, ReportingExporter } from './otlp-exporter';
import { RequestSpans } from './request-spans';

/** What tracing.ts needs of the SDK once tracing is on. */
export interface TracingSdk {
  start(req: Request): RequestTrace;
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry SDK's half of the tracing (tracing.ts): loaded only when `telemetry.otlp` is configured, so a
 * gateway without it never loads the SDK, its resources and semantic conventions (~1.6 MB of a process at rest,
 * docs/performance.md, memory under load). A TracerProvider (not registered as the global one) with a batch
 * processor and the configured OTLP exporter, a ParentBased(TraceIdRatioBased(sampleRatio)) sampler and the W3C
 * trace-context propagator.
 */
export async function startTracingSdk(
  otlp: OtlpConfig,
  config: GatewayConfig,
  redactor: Redactor,
  logger: AppLogger,
): Promise<TracingSdk> {
  const exporter = new ReportingExporter(await otlpExporter(otlp), (state, reason) =>
    state === 'failing'
      ? logger.pino.warn({ endpoint: otlp.endpoint, reason }, 'exporting traces failed; spans are dropped')
      : logger.pino.info({ endpoint: otlp.endpoint }, 'exporting traces works again'),
  );
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'switchyard' }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(otlp.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: otlp.exportDelayMs })],
  });
  const servers = new Map(
    Object.entries(config.backends).map(([id, backend]) => [id, serverOf(backend.baseUrl)]),
  );
  const tools = {
    tracer: provider.getTracer('switchyard'),
    propagator: new W3CTraceContextPropagator(),
    redactor,
    serverOf: (backendId: string) => servers.get(backendId),
  };
  return {
    start: (req) => new RequestSpans(tools, req.exchange, req),
    shutdown: () => provider.shutdown(),
  };
}
