import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { cleanLimits, type Limits } from '../core/limit-settings';
import { toolGlobsMatchingNothing } from '../mcp/tool-globs';
import { mergePatch } from './merge-patch';
import {
  assertNamedWithinCeiling,
  clampToCeiling,
  mergeCeiling,
  type CeilingPatch,
  type TeamCeiling,
} from './team-ceiling';
import { TEAM_RECORDS, type TeamRecords } from './team-records.repository';

export interface Team {
  id: string;
  /** Model names or `*` globs the team may call. */
  models: string[];
  limits: Limits;
  /** What an org-admin lets a team-admin give the team (team-ceiling.ts); null: none. */
  ceiling: TeamCeiling | null;
  /** Free-form labels for the operator (cost centre, owner, ...). */
  metadata: Record<string, string>;
  disabled: boolean;
  /** Its team-members may issue, list, rotate and revoke team tokens of their own (access/permissions.ts, tokens:own). */
  selfServiceTokens: boolean;
  /** What the request log keeps of its requests; `content: null` follows logging.requests.content. */
  logging: TeamLogging;
  /** Its requests use the response cache of models that have one (docs/response-cache.md); false opts it out. */
  responseCache: boolean;
  /** The MCP servers and tools its tokens may reach through /mcp (docs/mcp.md); no servers: none. */
  mcp: TeamMcp;
  createdAt: string;
  updatedAt: string;
}

/** A team's request-log setting (docs/request-log.md): `full` keeps what was sent and answered, redacted. */
export interface TeamLogging {
  content: 'none' | 'full' | null;
}

/** A team's MCP permissions: server ids, and globs over the tools' gateway names (`<server>__<tool>`). */
export interface TeamMcp {
  servers: string[];
  tools: string[];
}

/** What a team may reach through /mcp when nothing says otherwise: nothing (least privilege). */
export const NO_MCP: TeamMcp = { servers: [], tools: ['*'] };

/**
 * What create and update accept. An update changes only what it names (JSON Merge Patch, RFC 7396, for the
 * maps): in `limits` and `metadata` a key with a value sets it, a key with `null` removes it, and a key not given
 * is left as it is; `limits: null` / `metadata: null` remove them all. `models` is one setting (a list), replaced
 * whole. `ceiling` is patched the same way (CeilingPatch: its models replaced, its limits merged; `ceiling: null`
 * removes it). On create, nulls are simply absent.
 */
export interface TeamChanges {
  models?: string[];
  limits?: LimitsPatch | null;
  ceiling?: CeilingPatch | null;
  metadata?: MetadataPatch | null;
  disabled?: boolean;
  selfServiceTokens?: boolean;
  logging?: TeamLogging;
  responseCache?: boolean;
  /** Replaced whole, like `models`; `tools` not given (or null) is every tool of the servers (`*`). */
  mcp?: TeamMcpChange;
}

/** A team's MCP permissions as create and update take them: `tools` may be left out. */
export interface TeamMcpChange {
  servers: string[];
  tools?: string[] | null;
}

export type LimitsPatch = { [name in keyof Limits]?: number | null };
export type MetadataPatch = Record<string, string | null>;

/** What an update did to values it did not name, to keep the team within its (new) ceiling; null: nothing. */
export type Clamped = {
  models?: { from: string[]; to: string[] };
  limits?: { from: Limits; to: Limits };
} | null;

/**
 * A check of a change against the team as read (a team-admin's bound: admin/team-admin-changes.ts), run again on
 * every re-read, so what is written was checked against what it replaced. It throws to refuse.
 */
export type ChangeCheck = (team: Team, changes: TeamChanges) => void;

/** Labels a team may have (as many as the admin body validator allows in one request). */
export const MAX_METADATA_KEYS = 64;
/** Concurrent updates of one team are retried this often before giving up (each retry re-reads and re-merges). */
const UPDATE_ATTEMPTS = 10;
/** The fields a team's bound reads: a write of any of them is compare-and-set on all of them. */
const BOUND_FIELDS = ['models', 'limits', 'ceiling'];

export function parseTeam(fields: Record<string, string>): Team | null {
  if (!fields.id) return null;
  return {
    id: fields.id,
    models: JSON.parse(fields.models ?? '[]') as string[],
    limits: JSON.parse(fields.limits ?? '{}') as Limits,
    ceiling: fields.ceiling ? (JSON.parse(fields.ceiling) as TeamCeiling) : null,
    metadata: JSON.parse(fields.metadata ?? '{}') as Record<string, string>,
    disabled: fields.disabled === '1',
    selfServiceTokens: fields.selfServiceTokens === '1',
    logging: {
      content: fields.logContent === 'none' || fields.logContent === 'full' ? fields.logContent : null,
    },
    responseCache: fields.responseCache !== '0',
    mcp: fields.mcp ? (JSON.parse(fields.mcp) as TeamMcp) : NO_MCP,
    createdAt: fields.createdAt,
    updatedAt: fields.updatedAt ?? fields.createdAt,
  };
}

/**
 * The fields a write stores: the team as it is (`team`; a blank one on create) with `changes` merged in, and kept
 * within its ceiling. A model or limit `changes` names must be within the (new) ceiling, else 400; what it does
 * not name is brought within it (clampToCeiling), reported in `clamped`.
 */
function mergedFields(
  team: Team,
  changes: TeamChanges,
): { fields: Record<string, string>; clamped: Clamped } {
  const fields: Record<string, string> = {};
  const ceiling = mergeCeiling(team.ceiling, changes.ceiling);
  const models = changes.models ?? team.models;
  const limits = cleanLimits(
    mergePatch<number>(
      team.limits as Record<string, number>,
      changes.limits as Record<string, number | null> | null | undefined,
    ),
  );
  assertNamedWithinCeiling(team.id, ceiling, {
    models: changes.models && models,
    limits: changes.limits === undefined ? undefined : limits,
    limitsNamed: changes.limits === null ? 'all' : Object.keys(changes.limits ?? {}),
  });
  const within = clampToCeiling(models, limits, ceiling);
  let clamped: Clamped = null;
  if (JSON.stringify(within.models) !== JSON.stringify(models))
    clamped = { models: { from: models, to: within.models } };
  if (JSON.stringify(within.limits) !== JSON.stringify(limits))
    clamped = { ...clamped, limits: { from: limits, to: within.limits } };
  if (changes.ceiling !== undefined) fields.ceiling = ceiling ? JSON.stringify(ceiling) : '';
  if (changes.models || clamped?.models) fields.models = JSON.stringify(within.models);
  if (changes.limits !== undefined || clamped?.limits) fields.limits = JSON.stringify(within.limits);
  if (changes.metadata !== undefined) {
    const metadata = mergePatch(team.metadata, changes.metadata);
    if (Object.keys(metadata).length > MAX_METADATA_KEYS) {
      throw new GatewayException(
        'invalid_request',
        `A team has at most ${MAX_METADATA_KEYS} metadata labels; this change would leave ${Object.keys(metadata).length} (remove some with null).`,
        {
          param: 'metadata',
          wireCode: null,
        },
      );
    }
    fields.metadata = JSON.stringify(metadata);
  }
  if (changes.disabled !== undefined) fields.disabled = changes.disabled ? '1' : '0';
  if (changes.selfServiceTokens !== undefined)
    fields.selfServiceTokens = changes.selfServiceTokens ? '1' : '0';
  if (changes.logging !== undefined) fields.logContent = changes.logging.content ?? '';
  if (changes.responseCache !== undefined) fields.responseCache = changes.responseCache ? '1' : '0';
  if (changes.mcp !== undefined)
    fields.mcp = JSON.stringify({ servers: changes.mcp.servers, tools: changes.mcp.tools });
  return { fields, clamped };
}

const BLANK: Team = {
  id: '',
  models: ['*'],
  limits: {},
  ceiling: null,
  metadata: {},
  disabled: false,
  selfServiceTokens: false,
  logging: { content: null },
  responseCache: true,
  mcp: NO_MCP,
  createdAt: '',
  updatedAt: '',
};

/**
 * Teams: their records (TeamRecords: Redis in production) read and merged. A data store only:
 * audit and cross-replica invalidation are the admin service's job.
 * Teams in the config file are a seed: created at boot when missing, never overwritten.
 */
@Injectable()
export class TeamStore implements OnApplicationBootstrap {
  constructor(
    @Inject(TEAM_RECORDS) private readonly records: TeamRecords,
    private readonly config: GatewayConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const [id, seed] of Object.entries(this.config.teams)) {
      await this.createIfMissing(id, {
        models: seed.models,
        limits: seed.limits,
        ceiling: seed.ceiling,
        metadata: seed.metadata,
        selfServiceTokens: seed.selfServiceTokens,
        logging: seed.logging,
        responseCache: seed.responseCache,
        mcp: seed.mcp && { servers: seed.mcp.servers, tools: seed.mcp.tools },
      });
    }
  }

  /**
   * Creates the team in one atomic step; false when it already existed. Models default to the ceiling's, else
   * every model; a limit the ceiling has and the team does not name is set to the ceiling's.
   */
  async createIfMissing(id: string, changes: TeamChanges): Promise<boolean> {
    const now = new Date().toISOString();
    const fields = {
      models: '["*"]',
      limits: '{}',
      metadata: '{}',
      disabled: '0',
      ...mergedFields({ ...BLANK, id }, changes).fields,
      id,
      createdAt: now,
      updatedAt: now,
    };
    return this.records.createIfMissing(id, fields);
  }

  async create(id: string, changes: TeamChanges): Promise<Team> {
    changes = withMcpDefaults(changes);
    this.assertValidMcp(changes);
    if (!(await this.createIfMissing(id, changes))) {
      throw new GatewayException('team_exists', `Team "${id}" already exists.`, { param: 'id' });
    }
    return this.require(id);
  }

  /**
   * Changes only what `changes` names (see TeamChanges). The merge (and `check`, when given) is made here from
   * the team as read, and written only if the fields it read are still as read (compare-and-set in one script),
   * else read, checked and merged again: two admins changing different limits of one team at once both get their
   * change, and a ceiling lowered while a team-admin's change is in flight is the one that change is checked
   * against (a write of models, limits or ceiling is guarded on all three).
   */
  async update(
    id: string,
    changes: TeamChanges,
    check?: ChangeCheck,
  ): Promise<{ team: Team; clamped: Clamped }> {
    changes = withMcpDefaults(changes);
    this.assertValidMcp(changes);
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const raw = await this.records.read(id);
      const team = parseTeam(raw);
      if (!team) throw new GatewayException('team_not_found', `Team "${id}" does not exist.`);
      check?.(team, changes);
      const { fields: merged, clamped } = mergedFields(team, changes);
      const fields = { ...merged, updatedAt: new Date().toISOString() };
      const read = ['limits', 'metadata'].filter((field) => field in fields);
      if (check || BOUND_FIELDS.some((field) => field in fields)) read.push(...BOUND_FIELDS);
      const expected = Object.fromEntries([...new Set(read)].map((field) => [field, raw[field] ?? '']));
      const written = await this.records.writeIfUnchanged(id, expected, fields);
      if (written === 'written') return { team: await this.require(id), clamped };
      if (written === 'missing') throw new GatewayException('team_not_found', `Team "${id}" does not exist.`);
    }
    throw new GatewayException(
      'team_update_conflict',
      `Team "${id}" is being changed by others at the same time; try again.`,
    );
  }

  /**
   * A team's MCP servers must be configured ones (mcp.servers; a server removed later is simply not reached), and
   * each of its tool globs able to match a tool of them (mcp/tool-globs.ts: `echo` for `remote__echo`, a server
   * misspelt or not given).
   */
  private assertValidMcp(changes: TeamChanges): void {
    if (!changes.mcp) return;
    const known = Object.keys(this.config.mcp.servers);
    const unknown = changes.mcp.servers.filter((server) => !known.includes(server));
    if (unknown.length > 0)
      throw new GatewayException(
        'invalid_request',
        `Unknown MCP server ${unknown.map((server) => `"${server}"`).join(', ')} (configured: ${known.join(', ') || 'none'}).`,
        { param: 'mcp.servers', wireCode: null },
      );
    const [nothing] = toolGlobsMatchingNothing(changes.mcp.servers, changes.mcp.tools ?? []);
    if (nothing)
      throw new GatewayException(
        'invalid_request',
        `The tool glob "${nothing.glob}" matches no tool of the team's servers: ${nothing.why}.`,
        { param: 'mcp.tools', wireCode: null },
      );
  }

  async get(id: string): Promise<Team | null> {
    return parseTeam(await this.records.read(id));
  }

  async require(id: string): Promise<Team> {
    const team = await this.get(id);
    if (!team) throw new GatewayException('team_not_found', `Team "${id}" does not exist.`);
    return team;
  }

  async list(): Promise<Team[]> {
    return this.read((await this.records.ids()).sort());
  }

  /**
   * One page of teams by id, optionally only ids containing `search`: the index is one set of ids (cheap to sort
   * and filter even at thousands of teams), and only the page's records are read.
   */
  async page(options: {
    limit: number;
    after?: string;
    search?: string;
  }): Promise<{ teams: Team[]; hasMore: boolean }> {
    const search = options.search?.toLowerCase();
    const ids = (await this.records.ids())
      .filter(
        (id) =>
          (!search || id.toLowerCase().includes(search)) &&
          (options.after === undefined || id > options.after),
      )
      .sort();
    return { teams: await this.read(ids.slice(0, options.limit)), hasMore: ids.length > options.limit };
  }

  private async read(ids: string[]): Promise<Team[]> {
    return (await this.records.readMany(ids)).map(parseTeam).filter((t): t is Team => t !== null);
  }

  /** Removes the team record and its token index (the tokens themselves are the caller's job). */
  async remove(id: string): Promise<void> {
    await this.records.remove(id);
  }
}

/**
 * `mcp` as it is stored: `tools` left out (or null) is `*`, every tool of the servers (docs/api.md), and a server
 * named twice is named once.
 */
export function withMcpDefaults(changes: TeamChanges): TeamChanges {
  if (!changes.mcp) return changes;
  const { servers, tools } = changes.mcp;
  return { ...changes, mcp: { servers: [...new Set(servers)], tools: tools ?? ['*'] } };
}
