import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { batch } from '../redis/batch';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type { PersonalTokenFields, PersonalTokenRecords } from './personal-token-records.repository';
import { HSET_IF_EXISTS } from './redis-token-records.repository';

/**
 * Personal tokens in Redis: a hash per token (`admin-token:{<id>}`, expiring some time after the token does, so
 * lists show an expired token for a while and then forget it), a set of ids per person
 * (`person:{<subject>}:admin-tokens`) and the person's last sign-in (`person:{<subject>}:sign-in`).
 */
@Injectable()
export class RedisPersonalTokenRecords implements PersonalTokenRecords {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {
    HSET_IF_EXISTS.defineOn(redis);
  }

  async add(subject: string, id: string, fields: PersonalTokenFields, keepUntil: number): Promise<void> {
    const key = this.keys.personalToken(id);
    await this.redis.hset(key, fields);
    await this.redis.pexpireat(key, keepUntil);
    await this.redis.sadd(this.keys.personTokens(subject), id);
  }

  read(id: string): Promise<PersonalTokenFields> {
    return this.redis.hgetall(this.keys.personalToken(id));
  }

  async ofSubject(subject: string): Promise<PersonalTokenFields[]> {
    const ids = await this.redis.smembers(this.keys.personTokens(subject));
    const rows = await batch(ids.map((id) => this.redis.hgetall(this.keys.personalToken(id))));
    const gone = ids.filter((_, i) => !rows[i][0] && !(rows[i][1] as PersonalTokenFields).id);
    // Records expire on their own; their ids leave the person's set when next listed.
    if (gone.length > 0) await this.redis.srem(this.keys.personTokens(subject), ...gone);
    return rows.flatMap(([error, fields]) => {
      if (error) throw error;
      return (fields as PersonalTokenFields).id ? [fields as PersonalTokenFields] : [];
    });
  }

  async writeIfExists(id: string, fields: PersonalTokenFields): Promise<boolean> {
    const key = this.keys.personalToken(id);
    return (await HSET_IF_EXISTS.run(this.redis, [key], Object.entries(fields).flat())) === 1;
  }

  async saveSignIn(subject: string, signIn: string): Promise<void> {
    await this.redis.set(this.keys.personSignIn(subject), signIn);
  }

  signIn(subject: string): Promise<string | null> {
    return this.redis.get(this.keys.personSignIn(subject));
  }
}
