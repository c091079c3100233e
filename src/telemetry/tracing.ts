import type { Request } from 'express';
import type { GatewayConfig } from '../config/config.schema';
import type { AppLogger } from '../common/logging/logger';
import type { RequestTrace } from '../gateway/request-trace';
import type { Redactor } from '../request-log/redaction/redactor';
import type { TracingSdk } from './tracing-sdk';

/** How long the shutdown waits for the last spans to be exported. */
const FLUSH_MS = 5_000;

/**
 * The gateway's tracing (docs/tracing.md): with `telemetry.otlp`, OpenTelemetry's SDK (tracing-sdk.ts, loaded then
 * and only then: no context manager, no instrumentation patches http or undici); each request's spans are started
 * and ended explicitly by the usage recorder and the pipeline (RequestSpans). Without it, `enabled` is false and
 * nothing else here is ever called: no tracer, no spans, and the SDK is never loaded.
 */
export class Tracing {
  private constructor(private readonly sdk?: TracingSdk) {}

  get enabled(): boolean {
    return this.sdk !== undefined;
  }

  static off(): Tracing {
    return new Tracing();
  }

  static async fromConfig(config: GatewayConfig, redactor: Redactor, logger: AppLogger): Promise<Tracing> {
    const otlp = config.telemetry.otlp;
    if (!otlp) return Tracing.off();
    const { startTracingSdk } = await import('./tracing-sdk');
    const sdk = await startTracingSdk(otlp, config, redactor, logger);
    logger.pino.info(
      { endpoint: otlp.endpoint, protocol: otlp.protocol, sampleRatio: otlp.sampleRatio },
      'tracing: spans go over OTLP',
    );
    return new Tracing(sdk);
  }

  /** A request's spans (only called when `enabled`). */
  start(req: Request): RequestTrace {
    return this.sdk!.start(req);
  }

  /** Exports what is left (bounded: a receiver that is down does not hold the shutdown up). */
  async shutdown(): Promise<void> {
    if (!this.sdk) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.sdk.shutdown().catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_MS))),
    ]);
    clearTimeout(timer);
  }
}
