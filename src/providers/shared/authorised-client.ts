import type { UpstreamCall } from '../../core/upstream-call';
import type { BackendConfig } from '../../config/config.schema';
import { UpstreamClient, type BackendClient, type UpstreamResponse } from '../upstream-client';

/** A call's headers with its authorisation, and what to do with the answer (a refused token dropped). */
export interface Authorised {
  headers: Record<string, string>;
  answered?(response: UpstreamResponse): void;
}

/**
 * The pooled HTTP client of every family with the cloud's own authorisation added to each call: a family says how
 * a call is authorised (`authorise`), this sends it and hands the rest (transport errors, load, probes, closing)
 * to the pooled client.
 */
export abstract class AuthorisedClient implements BackendClient {
  protected readonly http: UpstreamClient;

  constructor(backendId: string, config: BackendConfig) {
    this.http = new UpstreamClient(backendId, config);
  }

  /** The headers to send `call` with; may wait for a credential, never past `signal`. */
  protected abstract authorise(call: UpstreamCall, signal: AbortSignal): Promise<Authorised>;

  async send(call: UpstreamCall, signal: AbortSignal): Promise<UpstreamResponse> {
    const { headers, answered } = await this.authorise(call, signal);
    const response = await this.http.send({ ...call, headers }, signal);
    answered?.(response);
    return response;
  }

  transportError(error: unknown): unknown {
    return this.http.transportError(error);
  }

  inFlight(): number {
    return this.http.inFlight();
  }

  probe(timeoutMs: number): Promise<string | undefined> {
    return this.http.probe(timeoutMs);
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
