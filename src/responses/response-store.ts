import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { GatewayConfig } from '../config/config.schema';
import { REDIS } from '../redis/redis.module';
import { RedisKeys } from '../redis/redis-keys';
import type { InputItem } from './dto/response-items';
import { newId, type OutputItem } from './response-object';

/** What the gateway keeps of a stored response. */
export interface StoredResponse {
  response: Record<string, unknown>;
  /** This request's own input items, with ids (GET .../input_items). */
  input: Array<InputItem & { id: string }>;
  /** Everything a continuation replays: the previous responses' items, this input, this output. */
  conversation: Array<InputItem | OutputItem>;
}

/**
 * Stored responses (`store`, default true) in Redis under the team's hash tag, one JSON value per response with
 * a TTL (responses.storeTtlSeconds). The key names the team, so another team's id is simply not there: a 404,
 * never a leak. The gateway keeps the state for every backend, so any deployment (or a fallback in another
 * family) can continue a conversation.
 */
@Injectable()
export class ResponseStore {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly config: GatewayConfig,
  ) {}

  async save(team: string, stored: StoredResponse): Promise<void> {
    await this.redis.set(this.keys.storedResponse(team, String(stored.response.id)), JSON.stringify(stored), 'EX', this.config.responses.storeTtlSeconds);
  }

  async load(team: string, id: string): Promise<StoredResponse | undefined> {
    const json = await this.redis.get(this.keys.storedResponse(team, id));
    return json ? (JSON.parse(json) as StoredResponse) : undefined;
  }

  async delete(team: string, id: string): Promise<boolean> {
    return (await this.redis.del(this.keys.storedResponse(team, id))) === 1;
  }
}

/** Input items as stored: each with an id (OpenAI gives input items ids too), messages typed. */
export function withIds(items: InputItem[]): Array<InputItem & { id: string }> {
  return items.map((item) => ({ ...item, id: item.id ?? newId(item.type === 'function_call' ? 'fc' : item.type === 'reasoning' ? 'rs' : 'msg') }) as InputItem & { id: string });
}
