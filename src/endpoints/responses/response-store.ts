import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { nextTurn } from '../../common/http/json-shape';
import { GatewayConfig } from '../../config/config.schema';
import { REDIS } from '../../redis/redis.module';
import { RedisKeys } from '../../redis/redis-keys';
import type { InputItem } from './dto/response-items';
import type { OutputItem } from './response-object';

/** What the gateway keeps of a stored response. */
export interface StoredResponse {
  response: Record<string, unknown>;
  /** This request's own input items, with ids (GET .../input_items). */
  input: Array<InputItem & { id: string }>;
  /** Everything a continuation replays: the previous responses' items, this input, this output. */
  conversation: Array<InputItem | OutputItem>;
  /**
   * JSON values (json-shape.ts) of the requests the conversation was sent in, summed: a continuation may not take
   * it past MAX_BODY_VALUES (responses.service.ts). Absent in responses stored before it was counted.
   */
  values?: number;
}

/** What `save` is given: the conversation is the history it continued, this input and this response's output. */
export interface ResponseToStore {
  response: Record<string, unknown>;
  input: StoredResponse['input'];
  history: StoredResponse['conversation'];
  values: number;
}

/** The Nest injection token of the stored responses' repository (Redis in production). */
export const STORED_RESPONSES = Symbol('StoredResponses');

/** Stored responses as JSON, per team and response id, each expiring on its own. */
export interface StoredResponses {
  save(team: string, id: string, json: Buffer, ttlSeconds: number): Promise<void>;
  /** The JSON, or null (never stored, expired, or another team's). */
  find(team: string, id: string): Promise<string | null>;
  /** False when there was nothing to delete. */
  remove(team: string, id: string): Promise<boolean>;
}

/**
 * Stored responses in Redis under the team's hash tag (`resp:{team}:<id>`). The key names the team, so another
 * team's id is simply not there: a 404, never a leak.
 */
@Injectable()
export class RedisStoredResponses implements StoredResponses {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async save(team: string, id: string, json: Buffer, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.keys.storedResponse(team, id), json, 'EX', ttlSeconds);
  }

  find(team: string, id: string): Promise<string | null> {
    return this.redis.get(this.keys.storedResponse(team, id));
  }

  async remove(team: string, id: string): Promise<boolean> {
    return (await this.redis.del(this.keys.storedResponse(team, id))) === 1;
  }
}

/**
 * Stored responses (`store`, default true), one JSON value per response with a TTL (responses.storeTtlSeconds),
 * readable only by the team that stored it. The gateway keeps the state for every backend, so any deployment (or a
 * fallback in another family) can continue a conversation.
 */
@Injectable()
export class ResponseStore {
  constructor(
    @Inject(STORED_RESPONSES) private readonly stored: StoredResponses,
    private readonly config: GatewayConfig,
  ) {}

  async save(team: string, stored: ResponseToStore): Promise<void> {
    await this.stored.save(
      team,
      String(stored.response.id),
      await storedJson(stored),
      this.config.responses.storeTtlSeconds,
    );
  }

  async load(team: string, id: string): Promise<StoredResponse | undefined> {
    const json = await this.stored.find(team, id);
    return json ? (JSON.parse(json) as StoredResponse) : undefined;
  }

  async delete(team: string, id: string): Promise<boolean> {
    return this.stored.remove(team, id);
  }
}

/** Array items serialised per turn of the event loop: a few milliseconds of JSON.stringify. */
const ITEMS_PER_TURN = 4096;

/**
 * The stored JSON (`{response, input, conversation, values}`) as UTF-8 bytes: the input is serialised once (the
 * conversation repeats it), long arrays a slice per turn of the event loop, and Redis gets bytes (a string of
 * megabytes is measured, then encoded, by the client in one go). The most input a request may carry took
 * ~40 ms in one synchronous run when serialised as a whole.
 */
async function storedJson(stored: ResponseToStore): Promise<Buffer> {
  const input = await arrayItemsJson(stored.input);
  const history = await arrayItemsJson(stored.history);
  const output = await arrayItemsJson((stored.response.output as unknown[] | undefined) ?? []);
  const conversation = [history, input, output].filter((part) => part.length > 0);
  const parts: Buffer[] = [
    Buffer.from(`{"response":${JSON.stringify(stored.response)},"values":${stored.values},"input":[`),
    input,
    Buffer.from('],"conversation":['),
  ];
  conversation.forEach((part, index) => parts.push(...(index ? [COMMA, part] : [part])));
  parts.push(Buffer.from(']}'));
  return Buffer.concat(parts);
}

const COMMA = Buffer.from(',');

/** The items of an array as JSON bytes without the brackets (`1,2,3`), ITEMS_PER_TURN at a time. */
async function arrayItemsJson(items: readonly unknown[]): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let start = 0; start < items.length; start += ITEMS_PER_TURN) {
    if (start > 0) await nextTurn();
    const json = JSON.stringify(items.slice(start, start + ITEMS_PER_TURN));
    if (parts.length) parts.push(COMMA);
    parts.push(Buffer.from(json.slice(1, -1)));
  }
  return Buffer.concat(parts);
}

/**
 * Input items as stored, in one pass (one copy of each): typed as `itemsOf` types them (an item without `type` is a
 * message) and each with an id (OpenAI gives input items ids too). The ids of one request share a random stem and end in the item's index
 * (still `<prefix>_` and 48 hex digits): one random draw per item was ~5 us each, most of the time a big input took.
 */
export function storedInput(input: string | InputItem[]): Array<InputItem & { id: string }> {
  const stem = randomBytes(20).toString('hex');
  const items: InputItem[] =
    typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
  return items.map((item, index) => {
    if (item.type !== undefined && item.id !== undefined) return item as InputItem & { id: string };
    // Object.assign onto `{}` then two keys added: ~10x faster than a spread with them (which V8 copies into an
    // object with no room for more keys). A `__proto__` key (JSON.parse makes it an own key) must not be assigned.
    const copy: Record<string, unknown> = Object.hasOwn(item, '__proto__')
      ? { ...item }
      : Object.assign<Record<string, unknown>, InputItem>({}, item);
    copy.type ??= 'message';
    copy.id ??= `${copy.type === 'function_call' ? 'fc' : copy.type === 'reasoning' ? 'rs' : 'msg'}_${stem}${index.toString(16).padStart(8, '0')}`;
    return copy as unknown as InputItem & { id: string };
  });
}
