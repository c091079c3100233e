import type Redis from 'ioredis';
import { buildConfig } from '../support/config';
import { RedisKeys } from '../../src/redis/redis-keys';
import { RedisUsageRecords } from '../../src/usage/redis-usage-records.repository';
import { counterIncrements, recordFields, type UsageRecord } from '../../src/usage/usage-record';
import { usageRecord } from '../support/usage-record-fixture';

/**
 * The argument layout RedisUsageRecords sends its usage script (what the script reads from KEYS and ARGV:
 * redis-usage-records.repository.ts), against a connection that only captures the call. What the script then does
 * with it runs against a real Redis in test/e2e/redis-scripts.e2e.spec.ts.
 */
class CapturingConnection {
  readonly isCluster = false;
  readonly calls: Array<{ keys: string[]; args: Array<string | number> }> = [];
  answer = 1;
  defineCommand(): void {}
  recordUsage(numberOfKeys: number, ...rest: Array<string | number>): Promise<number> {
    this.calls.push({ keys: rest.slice(0, numberOfKeys).map(String), args: rest.slice(numberOfKeys) });
    return Promise.resolve(this.answer);
  }
}

const NOW = Date.UTC(2026, 10, 21, 10, 0, 0);
const record: UsageRecord = usageRecord('r1');

function setup() {
  const connection = new CapturingConnection();
  const redis = connection as unknown as Redis;
  const store = new RedisUsageRecords(
    redis,
    redis,
    new RedisKeys('p:'),
    buildConfig({ admin: { apiKey: 'k' } }, {}),
  );
  return { connection, store };
}

describe('RedisUsageRecords', () => {
  it('sends one script call per record: its marker, stream, day counters, lease, settlement, other days and fields', async () => {
    const { connection, store } = setup();
    const answers = await store.write(
      [
        {
          record,
          settle: { keys: ['p:lim:a', 'p:lim:b'], deltas: [-5, 7] },
          concurrencyKeys: ['p:conc'],
          estimate: false,
          otherDays: ['2026-11-20'],
        },
      ],
      NOW,
    );
    expect(answers).toEqual(['written']);
    const { keys, args } = connection.calls[0];
    expect(keys).toEqual([
      'p:usage:{alpha}:seen:r1',
      'p:usage:{alpha}:records',
      'p:usage:{alpha}:d:2026-11-21',
      'p:inflight:{alpha}',
      'p:lim:a',
      'p:lim:b',
      'p:conc',
      'p:usage:{alpha}:d:2026-11-20',
    ]);
    const increments = counterIncrements(record);
    expect(args).toEqual([
      7 * 86_400, // the marker outlives any retry by days
      `${NOW - 90 * 86_400_000}-0`, // stream trimmed to recordRetentionDays (90)
      400 * 86_400, // counters kept counterRetentionDays (400)
      'r1',
      2, // limit keys
      increments.length,
      'real',
      1, // one other day
      '2026-11-21',
      '2026-11-20',
      ...increments.flat(),
      -5,
      7,
      ...recordFields(record),
    ]);
  });

  it.each([
    [0, 'duplicate'],
    [1, 'written'],
    [2, 'replaced-estimate'],
    [3, 'replaced-counted-estimate'],
  ] as const)("reads the script's answer %i as %s", async (answer, stored) => {
    const { connection, store } = setup();
    connection.answer = answer;
    const write = {
      record,
      settle: { keys: [], deltas: [] },
      concurrencyKeys: [],
      estimate: true,
      otherDays: [],
    };
    expect(await store.write([write], NOW)).toEqual([stored]);
    expect(connection.calls[0].args[6]).toBe('estimate');
  });
});
