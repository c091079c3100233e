import type Redis from 'ioredis';
import { windowOf } from '../../src/limits/limit-windows';
import type { LimitName } from '../../src/core/limit-catalogue';
import { eventually } from './eventually';

/**
 * Waits until a team's limit counter for the current window holds `value` and returns it. A request settles its
 * reservation to its real count after the response has closed, so a test that depends on the settled count
 * polls the counter (which no request of the test changes meanwhile) and then sends its next request once.
 */
export async function waitForLimitCounter(
  gw: { redis: Redis; prefix: string },
  team: string,
  limit: LimitName,
  value: number,
): Promise<number> {
  return eventually(async () => {
    const key = `${gw.prefix}rl:{${team}}:team:${limit}:${windowOf(limit, Date.now()).id}`;
    const counted = Number((await gw.redis.get(key)) ?? 0);
    expect(counted).toBe(value);
    return counted;
  });
}
