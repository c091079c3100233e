import { Injectable } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { MetricsService } from '../metrics/metrics.service';
import { AppLogger } from '../common/logging/logger';

export type CircuitState = 'closed' | 'open' | 'half-open';

interface Circuit {
  failures: number;
  openedAt?: number;
  /** A probe is in flight (half-open): other requests keep skipping the deployment until it answers. */
  probing: boolean;
  lastError?: string;
  /** The error's message (the vendor's words scrubbed of keys, when it said any), for operators. */
  lastErrorMessage?: string;
  lastErrorAt?: number;
}

/**
 * Per deployment, per replica: after `routing.circuit.failures` failures in a row a deployment is skipped for
 * `cooldownMs`, then one request probes it; a success closes the circuit, a failure opens it again.
 *
 * Per replica rather than shared through Redis, on purpose: a shared circuit costs a Redis read on every
 * request's hot path (and a write on every failure) to save each replica from learning a dead deployment on
 * its own, which costs it `failures` failed attempts per cool-down, every one of them retried on another
 * deployment and so invisible to clients.
 */
@Injectable()
export class CircuitBreakers {
  private readonly circuits = new Map<string, Circuit>();
  private readonly failuresToOpen: number;
  private readonly cooldownMs: number;

  constructor(
    config: GatewayConfig,
    metrics: MetricsService,
    private readonly logger: AppLogger,
  ) {
    this.failuresToOpen = config.routing.circuit.failures;
    this.cooldownMs = config.routing.circuit.cooldownMs;
    const level = { closed: 0, 'half-open': 1, open: 2 } as const;
    metrics.setCircuitSource(() =>
      [...this.circuits.keys()].map((deployment) => ({ deployment, state: level[this.state(deployment)] })),
    );
  }

  state(id: string, now = Date.now()): CircuitState {
    const circuit = this.circuits.get(id);
    if (!circuit?.openedAt) return 'closed';
    return now - circuit.openedAt >= this.cooldownMs && !circuit.probing ? 'half-open' : 'open';
  }

  /** Whether a request may use the deployment now; in half-open state the first to ask becomes the probe. */
  allow(id: string): boolean {
    const state = this.state(id);
    if (state === 'closed') return true;
    if (state === 'open') return false;
    this.circuits.get(id)!.probing = true;
    return true;
  }

  success(id: string): void {
    const circuit = this.circuits.get(id);
    if (!circuit) return;
    if (circuit.openedAt)
      this.logger.pino.info({ deployment: id }, `circuit of deployment ${id} closed: it answered again`);
    Object.assign(circuit, { failures: 0, openedAt: undefined, probing: false });
  }

  /**
   * A failed call. `openNow`: the failure says every call will fail the same way (the backend refused our key, or
   * does not know the model), so the circuit opens at once instead of after `failures` of them.
   */
  failure(id: string, reason: string, options: { message?: string; openNow?: boolean } = {}): void {
    const circuit = this.circuits.get(id) ?? { failures: 0, probing: false };
    circuit.failures++;
    circuit.lastError = reason;
    circuit.lastErrorMessage = options.message;
    circuit.lastErrorAt = Date.now();
    const wasOpen = circuit.openedAt !== undefined;
    if (circuit.probing || options.openNow || circuit.failures >= this.failuresToOpen)
      circuit.openedAt = Date.now();
    circuit.probing = false;
    this.circuits.set(id, circuit);
    if (circuit.openedAt && !wasOpen) {
      this.logger.pino.warn(
        { deployment: id, failures: circuit.failures, error: reason, reason: options.message },
        `circuit of deployment ${id} opened after ${circuit.failures} failure(s) in a row (${reason}${options.message ? `: ${options.message}` : ''}); skipped for ${this.cooldownMs} ms`,
      );
    }
  }

  /** Why the deployment is skipped now (its circuit is open), if it is. */
  openBecause(id: string): string | undefined {
    if (this.state(id) !== 'open') return undefined;
    const circuit = this.circuits.get(id)!;
    return `circuit open after ${circuit.failures} failure(s) in a row (last: ${circuit.lastError}${circuit.lastErrorMessage ? `: ${circuit.lastErrorMessage}` : ''})`;
  }

  /** For the admin view: state, failures in a row, last error. */
  describe(id: string): {
    state: CircuitState;
    consecutiveFailures: number;
    lastError: string | null;
    lastErrorMessage: string | null;
    lastErrorAt: string | null;
  } {
    const circuit = this.circuits.get(id);
    return {
      state: this.state(id),
      consecutiveFailures: circuit?.failures ?? 0,
      lastError: circuit?.lastError ?? null,
      lastErrorMessage: circuit?.lastErrorMessage ?? null,
      lastErrorAt: circuit?.lastErrorAt ? new Date(circuit.lastErrorAt).toISOString() : null,
    };
  }
}
