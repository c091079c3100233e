import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Request } from 'express';
import type { GatewayConfig } from '../config/config.schema';
import type { AppLogger } from '../common/logging/logger';
import type { RequestTrace } from '../gateway/request-trace';
import type { Redactor } from '../request-log/redaction/redactor';
import { serverOf } from './gen-ai-provider';
import { otlpExporter, ReportingExporter } from './otlp-exporter';
import { RequestSpans, type SpanTools } from './request-spans';

/** How long the shutdown waits for the last spans to be exported. */
const FLUSH_MS = 5_000;

/**
 * The gateway's tracing (docs/tracing.md): with `telemetry.otlp`, a TracerProvider (the SDK's, not registered as the
 * global one: no context manager, no instrumentation patches http or undici) with a batch processor and the configured
 * OTLP exporter, a ParentBased(TraceIdRatioBased(sampleRatio)) sampler and the W3C trace-context propagator; each
 * request's spans are started and ended explicitly by the usage recorder and the pipeline (RequestSpans). Without it,
 * `enabled` is false and nothing else here is ever called: no tracer, no spans.
 */
export class Tracing {
  private constructor(
    private readonly provider?: TracerProvider,
    private readonly tools?: SpanTools,
  ) {}

  get enabled(): boolean {
    return this.tools !== undefined;
  }

  static off(): Tracing {
    return new Tracing();
  }

  static async fromConfig(config: GatewayConfig, redactor: Redactor, logger: AppLogger): Promise<Tracing> {
    const otlp = config.telemetry.otlp;
    if (!otlp) return Tracing.off();
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
    logger.pino.info(
      { endpoint: otlp.endpoint, protocol: otlp.protocol, sampleRatio: otlp.sampleRatio },
      'tracing: spans go over OTLP',
    );
    return new Tracing(provider, {
      tracer: provider.getTracer('switchyard'),
      propagator: new W3CTraceContextPropagator(),
      redactor,
      serverOf: (backendId) => servers.get(backendId),
    });
  }

  /** A request's spans (only called when `enabled`). */
  start(req: Request): RequestTrace {
    return new RequestSpans(this.tools!, req.exchange, req);
  }

  /** Exports what is left (bounded: a receiver that is down does not hold the shutdown up). */
  async shutdown(): Promise<void> {
    if (!this.provider) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.provider.shutdown().catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_MS))),
    ]);
    clearTimeout(timer);
  }
}
