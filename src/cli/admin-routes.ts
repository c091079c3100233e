import { ceilingFrom, limitsFrom, limitsPatchFrom, mcpFrom, metadataPatchFrom } from './command-flags';

/** One admin API call: what a CLI command is when it talks to a gateway instead of to Redis. */
export interface AdminCall {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** The path, its segments escaped; the query, if any, is in `query`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: Record<string, unknown>;
}

/** A command's flags as commander parsed them. */
type Flags = Record<string, unknown>;

const at = (value: string | undefined) => encodeURIComponent(value ?? '');
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * Every command the CLI can run over the admin API (with a login, `--url` or SWITCHYARD_URL), to its route: the
 * positional arguments and the flags in, the call out. The same commands without a gateway talk to Redis
 * (main.ts); what each answers is the admin API's own body (a list's `data`).
 */
export const ADMIN_ROUTES = {
  'teams create': ([id], o: Flags) => ({
    method: 'POST',
    path: '/admin/v1/teams',
    body: {
      id,
      models: o.models,
      limits: limitsFrom(o),
      ceiling: ceilingFrom(o) ?? undefined,
      metadata: o.meta,
      mcp: mcpFrom(o),
    },
  }),
  'teams list': () => ({ method: 'GET', path: '/admin/v1/teams' }),
  'teams get': ([id]) => ({ method: 'GET', path: `/admin/v1/teams/${at(id)}` }),
  'teams budget': ([id]) => ({ method: 'GET', path: `/admin/v1/teams/${at(id)}/budget` }),
  'teams update': ([id], o: Flags) => ({
    method: 'PATCH',
    path: `/admin/v1/teams/${at(id)}`,
    body: {
      models: o.models,
      limits: limitsPatchFrom(o),
      ceiling: ceilingFrom(o),
      metadata: metadataPatchFrom(
        o.meta as Record<string, string> | undefined,
        o.unsetMeta as string[] | undefined,
      ),
      mcp: mcpFrom(o),
    },
  }),
  'teams disable': ([id]) => ({ method: 'POST', path: `/admin/v1/teams/${at(id)}/disable` }),
  'teams enable': ([id]) => ({ method: 'POST', path: `/admin/v1/teams/${at(id)}/enable` }),
  'teams delete': ([id], o: Flags) => ({
    method: 'DELETE',
    path: `/admin/v1/teams/${at(id)}`,
    query: { force: o.force === true ? 'true' : undefined },
  }),
  'tokens create': (_args, o: Flags) => ({
    method: 'POST',
    path: `/admin/v1/teams/${at(text(o.team))}/tokens`,
    body: {
      name: o.name,
      expiresInSeconds: o.expiresIn,
      models: o.models,
      mcpTools: o.mcpTools,
      limits: limitsFrom(o),
    },
  }),
  'tokens list': (_args, o: Flags) => ({ method: 'GET', path: `/admin/v1/teams/${at(text(o.team))}/tokens` }),
  'tokens revoke': ([id]) => ({ method: 'DELETE', path: `/admin/v1/tokens/${at(id)}` }),
  'tokens rotate': ([id], o: Flags) => ({
    method: 'POST',
    path: `/admin/v1/tokens/${at(id)}/rotate`,
    body: { gracePeriodSeconds: o.grace ?? 0 },
  }),
  usage: (_args, o: Flags) => ({
    method: 'GET',
    path: '/admin/v1/usage',
    query: {
      team: text(o.team),
      model: text(o.model),
      from: text(o.from),
      to: text(o.to),
      groupBy: text(o.groupBy),
    },
  }),
  audit: (_args, o: Flags) => ({
    method: 'GET',
    path: '/admin/v1/audit',
    query: { limit: o.limit as number | undefined, target: text(o.target) },
  }),
  deployments: () => ({ method: 'GET', path: '/admin/v1/deployments' }),
} satisfies Record<string, (args: string[], flags: Flags) => AdminCall>;

export type RoutedCommand = keyof typeof ADMIN_ROUTES;

/** The call's URL at the gateway `base`: its path, and its query without the flags not given. */
export function urlOf(base: string, call: AdminCall): URL {
  const url = new URL(`${base}${call.path}`);
  for (const [name, value] of Object.entries(call.query ?? {}))
    if (value !== undefined) url.searchParams.set(name, String(value));
  return url;
}
