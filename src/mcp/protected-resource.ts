import type { Request } from 'express';

/** The RFC 9728 well-known path, before the resource's own path is inserted after it. */
const WELL_KNOWN = '/.well-known/oauth-protected-resource';
/** A Host (or a trusted proxy's X-Forwarded-Host) that is a host name or address with an optional port, no more. */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * Where an MCP endpoint is as clients reach it: `/mcp`, or `/mcp/<server>` when `server` is given. The origin is
 * `server.publicUrl` when configured, so no request can make the gateway name another; else the request's own, as
 * Express reads it (X-Forwarded-Proto and -Host only from `server.trustedProxies`), and `localhost` for a Host that
 * is no host name (it would otherwise be written into a header and a URL).
 */
export function mcpResource(req: Request, publicUrl: string | undefined, server?: string): string {
  return `${originOf(req, publicUrl)}${resourcePath(server)}`;
}

/**
 * The resource's RFC 9728 metadata document, for `WWW-Authenticate: Bearer resource_metadata="..."`: the well-known
 * path with the resource's path inserted after it (RFC 9728, 3.1).
 */
export function resourceMetadataUrl(req: Request, publicUrl: string | undefined, server?: string): string {
  return `${originOf(req, publicUrl)}${WELL_KNOWN}${resourcePath(server)}`;
}

/** The server a request under /mcp names (`/mcp/<server>...`), or undefined for /mcp itself. */
export function serverOfPath(path: string): string | undefined {
  const match = /^\/mcp\/([^/]+)/.exec(path);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
}

function resourcePath(server: string | undefined): string {
  return server === undefined ? '/mcp' : `/mcp/${encodeURIComponent(server)}`;
}

function originOf(req: Request, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const host = req.host;
  const protocol = req.protocol === 'https' ? 'https' : 'http';
  return `${protocol}://${host && HOST.test(host) ? host : 'localhost'}`;
}
