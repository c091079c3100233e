import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import { cleanLimits, type Limits } from '../core/limit-settings';
import { TEAM_RECORDS, type TeamRecords } from './team-records.repository';

export interface Team {
  id: string;
  /** Model names or `*` globs the team may call. */
  models: string[];
  limits: Limits;
  /** Free-form labels for the operator (cost centre, owner, ...). */
  metadata: Record<string, string>;
  disabled: boolean;
  /** Its team-members may issue, list, rotate and revoke team tokens of their own (access/permissions.ts, tokens:own). */
  selfServiceTokens: boolean;
  createdAt: string;
  updatedAt: string;
}

/**
 * What create and update accept. An update changes only what it names (JSON Merge Patch, RFC 7396, for the two
 * maps): in `limits` and `metadata` a key with a value sets it, a key with `null` removes it, and a key not given
 * is left as it is; `limits: null` / `metadata: null` remove them all. `models` is one setting (a list), replaced
 * whole. On create, nulls are simply absent.
 */
export interface TeamChanges {
  models?: string[];
  limits?: LimitsPatch | null;
  metadata?: MetadataPatch | null;
  disabled?: boolean;
  selfServiceTokens?: boolean;
}

export type LimitsPatch = { [name in keyof Limits]?: number | null };
export type MetadataPatch = Record<string, string | null>;

/** Labels a team may have (as many as the admin body validator allows in one request). */
export const MAX_METADATA_KEYS = 64;
/** Concurrent updates of one team are retried this often before giving up (each retry re-reads and re-merges). */
const UPDATE_ATTEMPTS = 10;

/** `current` with `patch` merged in (RFC 7396 on a flat map): null removes a key, a null patch removes them all. */
export function mergePatch<T>(
  current: Record<string, T>,
  patch: Record<string, T | null> | null | undefined,
): Record<string, T> {
  if (patch === undefined) return current;
  if (patch === null) return {};
  const merged: Record<string, T> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue; // a DTO's declared but absent field
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

function metadataOf(patch: MetadataPatch | null | undefined): Record<string, string> {
  return mergePatch<string>({}, patch);
}

export function parseTeam(fields: Record<string, string>): Team | null {
  if (!fields.id) return null;
  return {
    id: fields.id,
    models: JSON.parse(fields.models ?? '[]') as string[],
    limits: JSON.parse(fields.limits ?? '{}') as Limits,
    metadata: JSON.parse(fields.metadata ?? '{}') as Record<string, string>,
    disabled: fields.disabled === '1',
    selfServiceTokens: fields.selfServiceTokens === '1',
    createdAt: fields.createdAt,
    updatedAt: fields.updatedAt ?? fields.createdAt,
  };
}

/** The fields of a new team. */
function toFields(changes: TeamChanges): Record<string, string> {
  const fields: Record<string, string> = {};
  if (changes.models) fields.models = JSON.stringify(changes.models);
  if (changes.limits) fields.limits = JSON.stringify(cleanLimits(changes.limits as Limits));
  if (changes.metadata) fields.metadata = JSON.stringify(metadataOf(changes.metadata));
  if (changes.disabled !== undefined) fields.disabled = changes.disabled ? '1' : '0';
  if (changes.selfServiceTokens !== undefined)
    fields.selfServiceTokens = changes.selfServiceTokens ? '1' : '0';
  return fields;
}

/** The fields an update writes: the team as it is (`team`, read from `fields`) with `changes` merged in. */
function updatedFields(team: Team, changes: TeamChanges): Record<string, string> {
  const fields: Record<string, string> = {};
  if (changes.models) fields.models = JSON.stringify(changes.models);
  if (changes.limits !== undefined)
    fields.limits = JSON.stringify(
      cleanLimits(
        mergePatch<number>(
          team.limits as Record<string, number>,
          changes.limits as Record<string, number | null> | null,
        ),
      ),
    );
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
  return fields;
}

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
        metadata: seed.metadata,
        selfServiceTokens: seed.selfServiceTokens,
      });
    }
  }

  /** Creates the team in one atomic step; false when it already existed. */
  async createIfMissing(id: string, changes: TeamChanges): Promise<boolean> {
    const now = new Date().toISOString();
    const fields = {
      models: '["*"]',
      limits: '{}',
      metadata: '{}',
      disabled: '0',
      ...toFields(changes),
      id,
      createdAt: now,
      updatedAt: now,
    };
    return this.records.createIfMissing(id, fields);
  }

  async create(id: string, changes: TeamChanges): Promise<Team> {
    if (!(await this.createIfMissing(id, changes))) {
      throw new GatewayException('team_exists', `Team "${id}" already exists.`, { param: 'id' });
    }
    return this.require(id);
  }

  /**
   * Changes only what `changes` names (see TeamChanges). The merge is made here from the team as read, and
   * written only if the fields it merged are still as read (compare-and-set in one script), else read and merged
   * again: two admins changing different limits of one team at once both get their change.
   */
  async update(id: string, changes: TeamChanges): Promise<Team> {
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const raw = await this.records.read(id);
      const team = parseTeam(raw);
      if (!team) throw new GatewayException('team_not_found', `Team "${id}" does not exist.`);
      const fields = { ...updatedFields(team, changes), updatedAt: new Date().toISOString() };
      const merged = ['limits', 'metadata'].filter((field) => field in fields);
      const expected = Object.fromEntries(merged.map((field) => [field, raw[field] ?? '']));
      const written = await this.records.writeIfUnchanged(id, expected, fields);
      if (written === 'written') return this.require(id);
      if (written === 'missing') throw new GatewayException('team_not_found', `Team "${id}" does not exist.`);
    }
    throw new GatewayException(
      'team_update_conflict',
      `Team "${id}" is being changed by others at the same time; try again.`,
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
