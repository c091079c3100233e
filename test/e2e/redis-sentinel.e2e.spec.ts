import { OpenAIUpstream } from '../support/openai-upstream';
import { PrivateRedisSentinel } from '../support/redis-sentinel';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { accountsEachTeamExactly, limitsAndRevocationHold, servesThroughFailover } from '../support/topology-checks';

/**
 * The gateway on a Sentinel-managed Redis (a master, a replica, three sentinels, started by the test): the same
 * accounting, limits and revocation checks as on one server, then the master crashes under load and the
 * sentinels promote the replica.
 */
describe('on Redis Sentinel', () => {
  jest.setTimeout(180_000);
  const sentinel = new PrivateRedisSentinel();
  let upstream: OpenAIUpstream;
  let gateways: TestGateway[];

  beforeAll(async () => {
    await sentinel.start();
    upstream = await new OpenAIUpstream().start();
    const config = { redis: { sentinel: { sentinels: sentinel.sentinels, name: sentinel.name }, commandTimeoutMs: 500 }, auth: { onOutage: 'last-known' } };
    const first = await startTestGateway({ upstreamUrl: upstream.url, config });
    gateways = [first, await startTestGateway({ upstreamUrl: upstream.url, config, prefix: first.prefix })];
  });
  afterAll(async () => {
    for (const g of gateways ?? []) await g.close();
    await upstream?.stop();
    await sentinel.stop();
  });

  it('accounts exactly, with one record per request', async () => {
    await accountsEachTeamExactly(gateways, ['north', 'south']);
  });

  it('limits hold across both replicas, and a revocation on one is refused on the other within 1 s', async () => {
    await limitsAndRevocationHold(gateways);
  });

  it('keeps answering through a master crash, with one record per request once the sentinels promote the replica', async () => {
    await servesThroughFailover(gateways, 'failover', async () => {
      await sentinel.killMaster();
    });
  });
});
