import type { Request } from 'express';

/** Where this gateway's MCP endpoint is, as clients reach it (behind a trusted proxy, its forwarded host). */
export function mcpResource(req: Request): string {
  return `${originOf(req)}/mcp`;
}

/** The RFC 9728 metadata document's address, for `WWW-Authenticate: Bearer resource_metadata="..."`. */
export function resourceMetadataUrl(req: Request): string {
  return `${originOf(req)}/.well-known/oauth-protected-resource`;
}

function originOf(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}
