import type { Request } from 'express';

const addresses = new WeakMap<Request, string | undefined>();

/**
 * The client's address as Express works it out (`req.ip`: X-Forwarded-For followed only from server.trustedProxies),
 * worked out once per request: the access log and the request log both name it, and each `req.ip` read walks the
 * forwarded addresses again.
 */
export function clientAddress(req: Request): string | undefined {
  if (addresses.has(req)) return addresses.get(req);
  const address = req.ip;
  addresses.set(req, address);
  return address;
}
