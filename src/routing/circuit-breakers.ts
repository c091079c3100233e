import { Injectable } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { MetricsService } from '../metrics/metrics.service';

export type CircuitState = 'closed' | 'open' | 'half-open';

interface Circuit {
  failures: number;
  openedAt?: number;
  /** A probe is in flight (half-open): other requests keep skipping the deployment until it answers. */
  probing: boolean;
  lastError?: string;
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

  constructor(config: GatewayConfig, metrics: MetricsService) {
    this.failuresToOpen = config.routing.circuit.failures;
    this.cooldownMs = config.routing.circuit.cooldownMs;
    const level = { closed: 0, 'half-open': 1, open: 2 } as const;
    metrics.setCircuitSource(() => [...this.circuits.keys()].map((deployment) => ({ deployment, state: level[this.state(deployment)] })));
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
    if (circuit) Object.assign(circuit, { failures: 0, openedAt: undefined, probing: false });
  }

  failure(id: string, reason: string): void {
    const circuit = this.circuits.get(id) ?? { failures: 0, probing: false };
    circuit.failures++;
    circuit.lastError = reason;
    circuit.lastErrorAt = Date.now();
    if (circuit.probing || circuit.failures >= this.failuresToOpen) circuit.openedAt = Date.now();
    circuit.probing = false;
    this.circuits.set(id, circuit);
  }

  /** For the admin view: state, failures in a row, last error. */
  describe(id: string): { state: CircuitState; consecutiveFailures: number; lastError: string | null; lastErrorAt: string | null } {
    const circuit = this.circuits.get(id);
    return {
      state: this.state(id),
      consecutiveFailures: circuit?.failures ?? 0,
      lastError: circuit?.lastError ?? null,
      lastErrorAt: circuit?.lastErrorAt ? new Date(circuit.lastErrorAt).toISOString() : null,
    };
  }
}
