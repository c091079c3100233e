import { readFileSync } from 'node:fs';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { parse as parseYaml } from 'yaml';
import type { BackendFamilies, BackendFamilyShape, ModelProblem } from './backend-families';
import { parseRole } from '../access/roles';
import { configuredPatternProblem } from '../request-log/redaction/configured-patterns';
import { toolGlobsMatchingNothing, toolGlobSyntaxProblem } from '../mcp/tool-globs';
import { limitsOutside, modelsOutside } from '../teams/team-ceiling';
import {
  BackendConfig,
  GatewayConfig,
  McpConfig,
  McpServerConfig,
  ModelConfig,
  OidcConfig,
  type RedactionPatternConfig,
  TeamSeedConfig,
} from './config.schema';

/** A config problem, always naming the key, so the operator can fix it without reading code. */
export class ConfigError extends Error {
  constructor(problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string of the parsed YAML.
 * Interpolating after parsing means a secret can never break the YAML syntax.
 */
export function interpolateEnv(
  value: unknown,
  env: NodeJS.ProcessEnv,
  path: string,
  problems: string[],
): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REF, (_match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined) return found;
      if (fallback !== undefined) return fallback;
      problems.push(`${path || '(root)'}: environment variable ${name} is not set`);
      return '';
    });
  }
  if (Array.isArray(value))
    return value.map((item, i) => interpolateEnv(item, env, `${path}[${i}]`, problems));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = interpolateEnv(item, env, path ? `${path}.${key}` : key, problems);
    }
    return out;
  }
  return value;
}

/**
 * Constraints that say what kind of value a key takes. When one of them fails, the key's other constraints (a
 * range, a length) say nothing useful about the value given: `port: eighty` is not an integer, and "must not be
 * greater than 65535" beside it would only contradict "must not be less than 0". So a key gets one line.
 */
const KIND_CONSTRAINTS = [
  'isInt',
  'isNumber',
  'isString',
  'isBoolean',
  'isArray',
  'isObject',
  'nestedValidation',
];

/** Keys whose values are never echoed in an error (they may hold a secret). */
const SECRET_KEY = /key|password|secret|token/i;

/** The value given, for the error line: short scalars only, never from a key that may hold a secret. */
function given(error: ValidationError): string {
  const value: unknown = error.value;
  if (
    SECRET_KEY.test(error.property) ||
    (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
  )
    return '';
  const text = JSON.stringify(value);
  return ` (got ${text.length > 40 ? `${text.slice(0, 37)}...` : text})`;
}

function describe(errors: ValidationError[], path: string, out: string[]): void {
  for (const error of errors) {
    const here = path ? `${path}.${error.property}` : error.property;
    const constraints = Object.entries(error.constraints ?? {});
    // A missing key: its own "must be set" says more than "must be a string".
    const missing =
      error.value === undefined ? constraints.find(([name]) => name === 'isNotEmpty') : undefined;
    const kind = missing ? undefined : constraints.find(([name]) => KIND_CONSTRAINTS.includes(name));
    for (const [, message] of missing ? [missing] : kind ? [kind] : constraints) {
      // class-validator starts each message with the property name; we print the full path instead.
      const text = message.startsWith(error.property + ' ')
        ? message.slice(error.property.length + 1)
        : message;
      out.push(`${here}: ${text}${kind ? given(error) : ''}`);
    }
    describe(error.children ?? [], here, out);
  }
}

function validateEntry<T extends object>(
  cls: ClassConstructor<T>,
  raw: unknown,
  path: string,
  problems: string[],
): T {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(`${path}: must be a mapping`);
    return new cls();
  }
  const instance = plainToInstance(cls, raw);
  describe(
    validateSync(instance, { forbidUnknownValues: false, whitelist: true, forbidNonWhitelisted: true }),
    path,
    problems,
  );
  return instance;
}

function validateMap<T extends object>(
  cls: ClassConstructor<T>,
  raw: unknown,
  path: string,
  problems: string[],
) {
  const out: Record<string, T> = {};
  if (raw === undefined || raw === null) return out;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(`${path}: must be a mapping of id -> settings`);
    return out;
  }
  for (const [id, entry] of Object.entries(raw))
    out[id] = validateEntry(cls, entry, `${path}.${id}`, problems);
  return out;
}

/**
 * The backends, each validated with its family's config class (the common keys plus the family's own); a backend
 * whose `type` names no family is reported as that and checked for the common keys only.
 */
function validateBackends(
  raw: unknown,
  families: ReadonlyMap<string, BackendFamilyShape>,
  problems: string[],
): Record<string, BackendConfig> {
  const out: Record<string, BackendConfig> = {};
  if (raw === undefined || raw === null) return out;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(`backends: must be a mapping of id -> settings`);
    return out;
  }
  const known = `(known types: ${[...families.keys()].join(', ')})`;
  for (const [id, entry] of Object.entries(raw)) {
    const type = (entry as { type?: unknown } | null)?.type;
    const family = typeof type === 'string' ? families.get(type) : undefined;
    out[id] = validateEntry(family?.config ?? BackendConfig, entry, `backends.${id}`, problems);
    if (family || !entry || typeof entry !== 'object' || Array.isArray(entry)) continue;
    const what = type === undefined ? 'must be set' : `unknown backend type ${JSON.stringify(type)}`;
    problems.push(`backends.${id}.type: ${what} ${known}`);
  }
  return out;
}

type RawDoc = { backends?: Record<string, { apiKey?: unknown } | undefined> } | undefined;

/** The first environment variable a raw config string refers to (`${OPENAI_API_KEY:-}` -> OPENAI_API_KEY). */
function envNameOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return new RegExp(ENV_REF.source).exec(value)?.[1];
}

/**
 * Builds a validated config from an already-parsed object (used by the loader and by tests), with the backend
 * families the gateway has (providers/families.ts, passed in by the caller: config/ names no family).
 */
export function buildConfig(
  raw: unknown,
  families: BackendFamilies,
  env: NodeJS.ProcessEnv = process.env,
): GatewayConfig {
  const byType = new Map(families.map((family) => [family.type, family]));
  const problems: string[] = [];
  const doc = interpolateEnv(raw ?? {}, env, '', problems) as Record<string, unknown>;
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError(['(root): must be a mapping']);
  const { backends, models, teams, mcp, ...rest } = doc;
  const config = validateEntry(GatewayConfig, rest, '', problems);
  config.backends = validateBackends(backends, byType, problems);
  for (const [id, backend] of Object.entries(config.backends))
    backend.apiKeyEnv = envNameOf((raw as RawDoc)?.backends?.[id]?.apiKey);
  // A backend of no known type has been reported (its `type` key); the checks below need its family, so skip it.
  const familyOf = (backend: BackendConfig) => byType.get(backend.type);
  config.models = validateMap(ModelConfig, models, 'models', problems);
  config.teams = validateMap(TeamSeedConfig, teams, 'teams', problems);
  config.mcp = validateMcp(mcp, problems);

  for (const [name, model] of Object.entries(config.models)) {
    if (
      model.deployments !== undefined &&
      (model.backend !== undefined || model.upstreamModel !== undefined)
    ) {
      problems.push(`models.${name}: give either backend + upstreamModel or deployments, not both`);
    }
    const deployments =
      model.deployments ??
      (model.backend ? [{ backend: model.backend, upstreamModel: model.upstreamModel }] : []);
    if (model.deployments !== undefined && deployments.length === 0)
      problems.push(`models.${name}.deployments: must list at least one deployment`);
    let problem: ModelProblem | undefined;
    deployments.forEach((deployment, i) => {
      const where = model.deployments ? `models.${name}.deployments[${i}].backend` : `models.${name}.backend`;
      const backend = config.backends[deployment.backend];
      const family = backend && familyOf(backend);
      if (!backend) {
        problems.push(
          `${where}: unknown backend "${deployment.backend}" (known: ${Object.keys(config.backends).join(', ') || 'none'})`,
        );
      } else if (!family) {
        return;
      } else if (model.kind === 'embedding' && !family.embeddings) {
        const serving = families.filter((f) => f.embeddings).map((f) => f.type);
        const list = `${serving.slice(0, -1).join(', ')} and ${serving.at(-1)}`;
        problems.push(
          `models.${name}.kind: ${backend.type} backends do not serve embeddings (${list} ones do)`,
        );
      } else if ((problem = family.modelProblem?.(model, backend, deployment))) {
        // A problem with the deployment's model id names that id's key, the shorthand's or the list entry's.
        const key =
          problem.key === 'kind'
            ? `models.${name}.kind`
            : model.deployments
              ? `models.${name}.deployments[${i}].upstreamModel`
              : `models.${name}.upstreamModel`;
        problems.push(`${key}: ${problem.message}`);
      } else if (!family.thinking.includes(model.thinking)) {
        problems.push(
          `models.${name}.thinking: "${model.thinking}" does not apply to ${backend.type} backends (use ${family.thinking.join(' or ')})`,
        );
      }
    });
    for (const fallback of model.fallbacks ?? []) {
      if (!config.models[fallback]) problems.push(`models.${name}.fallbacks: unknown model "${fallback}"`);
      else if (config.models[fallback].kind !== model.kind)
        problems.push(
          `models.${name}.fallbacks: "${fallback}" is a ${config.models[fallback].kind} model, not ${model.kind}`,
        );
      else if (fallback === name)
        problems.push(`models.${name}.fallbacks: a model cannot fall back to itself`);
    }
  }
  for (const [id, team] of Object.entries(config.teams)) problems.push(...seedCeilingProblems(id, team));
  problems.push(...teamMcpProblems(config));
  if (config.auth.oidc) problems.push(...oidcProblems(config.auth.oidc));
  problems.push(...redactionPatternProblems(config));
  problems.push(...publicUrlProblems(config));
  const requestLog = config.logging.requests;
  if (requestLog.enabled && requestLog.store === 'postgres' && !requestLog.postgres.url)
    problems.push('logging.requests.postgres.url: must be set when logging.requests.store is postgres');
  // PORT set but empty (`PORT=` in an env file, `${PORT}` in compose with nothing behind it) is read as unset:
  // Number('') is 0, which would quietly listen on a random port. Only digits are a port (Number() also reads
  // "0x50", "1e3" and "+80").
  const portText = env.PORT?.trim();
  if (portText) {
    const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
    if (!(port <= 65535)) problems.push(`PORT: "${env.PORT}" is not a port number (0-65535)`);
    else config.server.port = port;
  }
  if (problems.length) throw new ConfigError(onePerUnsetVariable(problems.map((p) => p.replace(/^\./, ''))));
  return config;
}

/**
 * A server id is the prefix of its tools' gateway names (`<id>__<tool>`), so it may not hold `__` itself: letters,
 * digits and `-` (the name is then split on its first `__`).
 */
export const MCP_SERVER_ID = /^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/;

/** `mcp`: its servers validated entry by entry (errors name `mcp.servers.<id>.<key>`), each remote or local. */
function validateMcp(raw: unknown, problems: string[]): McpConfig {
  if (raw === undefined || raw === null) return new McpConfig();
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push('mcp: must be a mapping');
    return new McpConfig();
  }
  const { servers, ...others } = raw as Record<string, unknown>;
  const config = validateEntry(McpConfig, { ...others, servers: {} }, 'mcp', problems);
  config.servers = validateMap(McpServerConfig, servers, 'mcp.servers', problems);
  for (const [id, server] of Object.entries(config.servers)) {
    if (!MCP_SERVER_ID.test(id))
      problems.push(
        `mcp.servers.${id}: the id must be letters, digits and - (up to 32; it prefixes tool names)`,
      );
    if (server.url !== undefined && server.command !== undefined)
      problems.push(`mcp.servers.${id}: give either url (remote) or command (local, stdio), not both`);
    if (server.url === undefined && server.command === undefined)
      problems.push(`mcp.servers.${id}: one of url (remote) or command (local, stdio) is required`);
    // fetch refuses a URL with credentials in it (and would quote it whole in its error); never echoed here.
    if (server.url !== undefined && URL.canParse(server.url)) {
      const url = new URL(server.url);
      if (url.username || url.password)
        problems.push(
          `mcp.servers.${id}.url: credentials in the url (user:password@) cannot be sent; put them in headers (Authorization: Basic <base64 of user:password>)`,
        );
    }
    if (server.url === undefined && server.headers !== undefined)
      problems.push(`mcp.servers.${id}.headers: only for a remote server (url)`);
    // Values are never echoed: a header holds a credential.
    for (const key of ['headers', 'env'] as const)
      for (const [name, value] of Object.entries(server[key] ?? {}))
        if (typeof value !== 'string') problems.push(`mcp.servers.${id}.${key}.${name}: must be a string`);
  }
  return config;
}

/**
 * A team's mcp.servers must name configured servers, and each of its mcp.tools be a glob (mcp/tool-globs.ts) that
 * can match a tool of them, as the admin API holds them.
 */
function teamMcpProblems(config: GatewayConfig): string[] {
  const known = Object.keys(config.mcp.servers);
  return Object.entries(config.teams).flatMap(([id, team]) => {
    const servers = Array.isArray(team.mcp?.servers) ? team.mcp.servers : [];
    const tools = Array.isArray(team.mcp?.tools) ? team.mcp.tools.filter((t) => typeof t === 'string') : [];
    return [
      ...servers
        .filter((server) => !known.includes(server))
        .map(
          (server) =>
            `teams.${id}.mcp.servers: unknown MCP server "${server}" (known: ${known.join(', ') || 'none'})`,
        ),
      ...tools.flatMap((glob) => {
        const why = toolGlobSyntaxProblem(glob);
        return why ? [`teams.${id}.mcp.tools: "${glob}" ${why}`] : [];
      }),
      ...toolGlobsMatchingNothing(servers, tools).map(
        ({ glob, why }) => `teams.${id}.mcp.tools: "${glob}" matches no tool of its servers: ${why}`,
      ),
    ];
  });
}

/** A seeded team's own models and limits must be within its ceiling (what it leaves out takes the ceiling's). */
function seedCeilingProblems(id: string, team: TeamSeedConfig): string[] {
  const problems: string[] = [];
  if (team.models && team.ceiling?.models) {
    const outside = modelsOutside(team.ceiling.models, team.models);
    if (outside.length > 0)
      problems.push(`teams.${id}.models: ${outside.join(', ')} not within teams.${id}.ceiling.models`);
  }
  for (const { name, value, bound } of limitsOutside(team.ceiling?.limits ?? {}, team.limits ?? {}))
    if (value !== undefined)
      problems.push(
        `teams.${id}.limits.${name}: ${value} is over teams.${id}.ceiling.limits.${name} (${bound})`,
      );
  return problems;
}

/**
 * What the validators cannot say about auth.oidc: roles spelled right, `openid` asked, TLS to the provider, the CLI's
 * client not the console's.
 */
function oidcProblems(oidc: OidcConfig): string[] {
  const problems: string[] = [];
  // Keys of the wrong type have been reported by the validators already.
  const groupRoles = oidc.groupRoles && typeof oidc.groupRoles === 'object' ? oidc.groupRoles : {};
  for (const [group, role] of Object.entries(groupRoles))
    if (typeof role !== 'string' || !parseRole(role))
      problems.push(
        `auth.oidc.groupRoles.${group}: ${JSON.stringify(role)} is not a role (org-admin, org-viewer, team-admin:<team>, team-member:<team>)`,
      );
  if (Array.isArray(oidc.scopes) && !oidc.scopes.includes('openid'))
    problems.push('auth.oidc.scopes: must include "openid"');
  // The console's client is confidential (its secret stays on the gateway); the CLI's runs on laptops, so it is a
  // public client of its own: the same id would make the provider ask the CLI for a secret it must not have.
  if (oidc.cli?.clientId && oidc.cli.clientId === oidc.clientId)
    problems.push(
      "auth.oidc.cli.clientId: must be a public client of its own (no secret), not the console's auth.oidc.clientId",
    );
  // Plain HTTP only to a provider on this machine (a test's, a local Dex): elsewhere the code and tokens need TLS.
  for (const key of ['issuer', 'redirectUrl'] as const) {
    const url = URL.parse(String(oidc[key] ?? ''));
    if (url?.protocol === 'http:' && !isLoopback(url.hostname))
      problems.push(`auth.oidc.${key}: must be https (plain http only to localhost)`);
  }
  return problems;
}

/**
 * `server.publicUrl` is an origin only (RFC 9728 inserts its well-known path after the origin, and the gateway serves
 * it at its own root): no path, query, fragment or credentials. Kept without a trailing slash.
 */
function publicUrlProblems(config: GatewayConfig): string[] {
  const given = config.server.publicUrl;
  if (typeof given !== 'string') return [];
  const url = URL.parse(given);
  if (!url) return []; // reported by the validator
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || url.username || url.password)
    return [`server.publicUrl: must be an origin only, like https://gateway.example.com (got "${given}")`];
  config.server.publicUrl = url.origin;
  return [];
}

/** `logging` as the validators may have left it: any part given as something else than a mapping. */
type PartialLogging = {
  logging?: { requests?: { redaction?: { patterns?: Array<Partial<RedactionPatternConfig> | undefined> } } };
};

/** Each configured redaction pattern must compile with RE2 (linear time) and must not match the empty string. */
function redactionPatternProblems(config: GatewayConfig): string[] {
  const problems: string[] = [];
  // A section or list of the wrong kind, or a pattern that is not a string, has been reported by the validators.
  const patterns = (config as PartialLogging).logging?.requests?.redaction?.patterns;
  if (!Array.isArray(patterns)) return problems;
  patterns.forEach((entry, i) => {
    if (typeof entry?.pattern !== 'string' || entry.pattern === '') return;
    const problem = configuredPatternProblem(entry.pattern);
    if (problem) problems.push(`logging.requests.redaction.patterns[${i}].pattern: ${problem}`);
  });
  return problems;
}

/** localhost, 127.0.0.0/8 or [::1]. */
export function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** A key whose environment variable is not set is reported as that, not again as empty. */
function onePerUnsetVariable(problems: string[]): string[] {
  const keyOf = (problem: string) => problem.slice(0, problem.indexOf(': '));
  const unset = new Set(
    problems.filter((problem) => / environment variable \S+ is not set$/.test(problem)).map(keyOf),
  );
  return problems.filter(
    (problem) => !unset.has(keyOf(problem)) || / environment variable \S+ is not set$/.test(problem),
  );
}

/** Reads SWITCHYARD_CONFIG (default config/switchyard.yaml), interpolates ${ENV}, validates. */
export function loadConfig(families: BackendFamilies, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const path = env.SWITCHYARD_CONFIG ?? 'config/switchyard.yaml';
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([
      `SWITCHYARD_CONFIG: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? error})`,
    ]);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    throw new ConfigError([`${path}: not valid YAML: ${(error as Error).message}`]);
  }
  return buildConfig(parsed, families, env);
}
