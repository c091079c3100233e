/**
 * How the aggregated endpoint names what its servers offer: `<server>__<tool>` (Envoy AI Gateway's separator). A
 * server id holds no `__` (the config loader checks), so a gateway name splits on its first `__` and the tool keeps
 * any `__` of its own.
 */
export const SEPARATOR = '__';

export function gatewayName(server: string, name: string): string {
  return `${server}${SEPARATOR}${name}`;
}

/** The server and its own name behind a gateway name, or null when the name has no server part. */
export function splitGatewayName(gateway: string): { server: string; name: string } | null {
  const at = gateway.indexOf(SEPARATOR);
  if (at <= 0 || at + SEPARATOR.length === gateway.length) return null;
  return { server: gateway.slice(0, at), name: gateway.slice(at + SEPARATOR.length) };
}
