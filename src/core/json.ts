import { GatewayException } from './errors/gateway.exception';

/** A vendor error body, or undefined when it is not JSON (a proxy's HTML page, an empty body). */
export function parseErrorBody(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** One stream event's JSON; anything else is the backend's fault (502). */
export function parseStreamEvent<T>(data: string, backendId?: string): T {
  try {
    return JSON.parse(data) as T;
  } catch {
    throw new GatewayException(
      'upstream_error',
      `${backendId ? `Backend "${backendId}"` : 'The backend'} sent a malformed stream event.`,
    );
  }
}
