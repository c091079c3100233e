import type { Limits } from '../core/limit-settings';

/** Who is calling: the token's stable id, its team, what it may use and its limits. */
export interface Principal {
  tokenId: string;
  teamId: string;
  /** The team's model globs. */
  models: readonly string[];
  /** The token's narrower globs, or null when the token may use all the team's models. */
  tokenModels: readonly string[] | null;
  teamLimits: Limits;
  tokenLimits: Limits;
  /** The token's name, for the request log. */
  tokenName?: string | null;
  /** The person the token belongs to (tokens a person issued for themselves), for the request log. */
  owner?: { subject: string; email?: string } | null;
  /** The MCP servers and tool globs of the team (docs/mcp.md). */
  mcp?: { servers: readonly string[]; tools: readonly string[] };
  /** The token's narrower tool globs (over `<server>__<tool>`), or null for all the team's. */
  tokenMcpTools?: readonly string[] | null;
  /** The request log keeps what this caller sends and gets back (the team's logging.content, else the org's). */
  keepsContent?: boolean;
  /** False when the team opted out of the response cache (teams.<id>.responseCache: false); absent: it uses it. */
  responseCache?: boolean;
}
