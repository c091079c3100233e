import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AppLogger } from '../common/logging/logger';
import { GatewayConfig } from '../config/config.schema';
import { BACKENDS, type Backend } from '../providers/provider-adapter';
import { CircuitBreakers } from './circuit-breakers';
import type { Deployment } from './deployment';

/** What readiness and the admin view say of one backend. */
export interface BackendReport {
  usable: boolean;
  /** Why not, when it is not. */
  reason?: string;
}

interface Fault {
  reason: string;
  since: number;
}

/**
 * What this replica knows about each backend's health, beyond each deployment's circuit:
 * - a backend that needs a key and has none (providers.module.ts): never usable;
 * - a local model that cannot load (its client says so);
 * - a network backend that could not be reached: at start-up every backend's base URL gets a bounded TCP connect
 *   (`routing.probe.timeoutMs`; nothing is sent, so no key leaves), and one that fails is re-probed every
 *   `routing.circuit.cooldownMs` until it connects (or a call to it succeeds);
 * - a backend that refused the gateway's credentials (401/403): reported until a call to it succeeds.
 *
 * A deployment is known to be down when its backend is unusable for one of the first three reasons or its circuit is
 * open: the router does not list a model none of whose deployments is up, and the caller skips down deployments
 * (calling one anyway when nothing else can answer). Refused credentials open the deployment's circuit at once
 * (upstream-caller.ts), so they are covered there, and a half-open circuit's probe call can find the key fixed.
 */
@Injectable()
export class BackendHealth implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly unreachable = new Map<string, Fault>();
  private readonly refusedCredentials = new Map<string, Fault>();
  private reprobeTimer?: NodeJS.Timeout;
  private reprobing = false;

  constructor(
    @Inject(BACKENDS) private readonly backends: Map<string, Backend>,
    private readonly circuits: CircuitBreakers,
    private readonly config: GatewayConfig,
    private readonly logger: AppLogger,
  ) {}

  /** Probes every network backend before the gateway listens (bounded by the probe's timeout, all at once). */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.routing.probe.timeoutMs) return;
    await Promise.all(this.probeable().map((backend) => this.probe(backend, 'at start-up')));
    this.reprobeTimer = setInterval(() => void this.reprobe(), this.config.routing.circuit.cooldownMs);
    this.reprobeTimer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.reprobeTimer);
  }

  /** Why the backend cannot take any request now (no key, a local model that cannot load, unreachable), if so. */
  fault(backend: Backend): string | undefined {
    const unreachable = this.unreachable.get(backend.id);
    return (
      backend.unavailable ??
      backend.client.unusable?.() ??
      (unreachable && `${unreachable.reason} (since ${new Date(unreachable.since).toISOString()})`)
    );
  }

  /**
   * Why the backend cannot answer until its configuration is fixed (no key, a local model that cannot load), if so:
   * unlike an unreachable backend or an open circuit, retrying cannot help, so a model served only by such
   * backends is refused as unavailable (403, which clients do not retry) rather than failed (5xx).
   */
  misconfigured(backend: Backend): string | undefined {
    return backend.unavailable ?? backend.client.unusable?.();
  }

  /** Why the deployment is known to be down (its backend's fault, or its open circuit), if it is. */
  downBecause(deployment: Deployment): string | undefined {
    return this.fault(deployment.backend) ?? this.circuits.openBecause(deployment.id);
  }

  /** A call to the backend answered: whatever was known against it is over. */
  answered(backendId: string): void {
    const unreachable = this.unreachable.get(backendId);
    if (unreachable) {
      this.unreachable.delete(backendId);
      this.logger.pino.info({ backend: backendId }, `backend "${backendId}" answered: it is reachable again`);
    }
    if (this.refusedCredentials.delete(backendId))
      this.logger.pino.info(
        { backend: backendId },
        `backend "${backendId}" accepted the gateway's credentials again`,
      );
  }

  /** The backend refused the gateway's key (401/403): the operator must fix it; readiness says so until it answers. */
  credentialsRefused(backendId: string, reason: string): void {
    if (!this.refusedCredentials.has(backendId))
      this.refusedCredentials.set(backendId, { reason, since: Date.now() });
  }

  /** Every backend that serves a configured model, and whether it is usable now (readiness). */
  report(deployments: Deployment[]): Record<string, BackendReport> {
    const byBackend = new Map<string, Deployment[]>();
    for (const deployment of deployments)
      byBackend.set(deployment.backend.id, [...(byBackend.get(deployment.backend.id) ?? []), deployment]);
    const out: Record<string, BackendReport> = {};
    for (const [id, its] of byBackend) {
      const backend = its[0].backend;
      const refused = this.refusedCredentials.get(id);
      const allOpen = its.every((deployment) => this.circuits.openBecause(deployment.id) !== undefined);
      const reason =
        this.fault(backend) ??
        (refused && `it refused the gateway's credentials: ${refused.reason}`) ??
        (allOpen
          ? `every deployment's circuit is open (${its.map((d) => `${d.id}: ${this.circuits.openBecause(d.id)}`).join('; ')})`
          : undefined);
      out[id] = reason ? { usable: false, reason } : { usable: true };
    }
    return out;
  }

  private probeable(): Backend[] {
    return [...this.backends.values()].filter((backend) => !backend.unavailable && backend.client.probe);
  }

  private async probe(backend: Backend, when: string): Promise<void> {
    const failure = await backend.client.probe!(this.config.routing.probe.timeoutMs);
    if (failure && !this.unreachable.has(backend.id)) {
      this.unreachable.set(backend.id, { reason: `unreachable ${when}: ${failure}`, since: Date.now() });
      this.logger.pino.warn(
        { backend: backend.id, reason: failure },
        `backend "${backend.id}" is unreachable ${when} (${failure}): its deployments are skipped and models served only by it are not listed; probing again every ${this.config.routing.circuit.cooldownMs} ms`,
      );
    } else if (!failure && this.unreachable.has(backend.id)) {
      this.unreachable.delete(backend.id);
      this.logger.pino.info({ backend: backend.id }, `backend "${backend.id}" is reachable again`);
    }
  }

  /** Probes again the backends known to be unreachable (one round at a time). */
  private async reprobe(): Promise<void> {
    if (this.reprobing || this.unreachable.size === 0) return;
    this.reprobing = true;
    try {
      await Promise.all(
        this.probeable()
          .filter((backend) => this.unreachable.has(backend.id))
          .map((backend) => this.probe(backend, 'on a re-probe')),
      );
    } finally {
      this.reprobing = false;
    }
  }
}
