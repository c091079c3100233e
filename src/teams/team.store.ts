import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type Redis from 'ioredis';
import { GatewayConfig } from '../config/config.schema';
import { GatewayException } from '../common/errors/gateway.exception';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';

export interface Team {
  id: string;
  models: string[];
  createdAt: string;
  disabled: boolean;
}

export function parseTeam(fields: Record<string, string>): Team | null {
  if (!fields.id) return null;
  return {
    id: fields.id,
    models: JSON.parse(fields.models ?? '[]') as string[],
    createdAt: fields.createdAt,
    disabled: fields.disabled === '1',
  };
}

/** Teams in Redis. Teams in the config file are a seed: created at boot when missing, never overwritten. */
@Injectable()
export class TeamStore implements OnApplicationBootstrap {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly config: GatewayConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const [id, seed] of Object.entries(this.config.teams)) {
      await this.createIfMissing(id, seed.models);
    }
  }

  /** Creates the team; false when it already existed. */
  async createIfMissing(id: string, models: string[]): Promise<boolean> {
    const key = this.keys.team(id);
    const created = await this.redis.hsetnx(key, 'id', id);
    if (!created) return false;
    await this.redis
      .multi()
      .hset(key, { models: JSON.stringify(models), createdAt: new Date().toISOString(), disabled: '0' })
      .sadd(this.keys.teamIndex(), id)
      .exec();
    return true;
  }

  async create(id: string, models: string[]): Promise<Team> {
    if (!(await this.createIfMissing(id, models))) {
      throw new GatewayException('team_exists', `Team "${id}" already exists.`, { param: 'id' });
    }
    return this.require(id);
  }

  async get(id: string): Promise<Team | null> {
    return parseTeam(await this.redis.hgetall(this.keys.team(id)));
  }

  async require(id: string): Promise<Team> {
    const team = await this.get(id);
    if (!team) throw new GatewayException('team_not_found', `Team "${id}" does not exist.`);
    return team;
  }

  async list(): Promise<Team[]> {
    const ids = (await this.redis.smembers(this.keys.teamIndex())).sort();
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.team(id));
    const rows = (await pipeline.exec()) ?? [];
    return rows.map(([, fields]) => parseTeam(fields as Record<string, string>)).filter((t): t is Team => t !== null);
  }
}
