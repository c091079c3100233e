import { eventually } from './eventually';
import { loadUntil, type LoadTally } from './load';
import { OpenAIUpstream } from './openai-upstream';
import { startTestGateway, type TestGateway } from './test-gateway';
import { waitForUsageRecords, waitForUsageSummary } from './usage';

/**
 * The checks every Redis topology must pass (one server, Cluster, Sentinel), run against two gateway replicas
 * sharing one key prefix. Each spec starts its topology and calls these from its own `it`s.
 */

/**
 * Starts the topology, a stand-in upstream and two gateway replicas on it (one key prefix) before the spec's
 * tests, and stops them after. `replicas()` gives the gateways once started.
 */
export function twoReplicasOn(
  topology: { start(): Promise<void>; stop(): Promise<void> },
  redis: () => Record<string, unknown>,
  config: Record<string, unknown> = {},
): () => TestGateway[] {
  let upstream: OpenAIUpstream | undefined;
  let gateways: TestGateway[] = [];
  beforeAll(async () => {
    await topology.start();
    upstream = await new OpenAIUpstream().start();
    const merged = { ...config, redis: redis() };
    const first = await startTestGateway({ upstreamUrl: upstream.url, config: merged });
    gateways = [
      first,
      await startTestGateway({ upstreamUrl: upstream.url, config: merged, prefix: first.prefix }),
    ];
  });
  afterAll(async () => {
    for (const g of gateways) await g.close();
    await upstream?.stop();
    await topology.stop();
  });
  return () => gateways;
}

/**
 * Every replica reaches Redis (its readiness, a read): after a failover a replica's connections follow the new
 * master in their own time, and a token it never saw cannot be checked until then.
 */
async function everyReplicaOnRedis(gateways: TestGateway[]): Promise<void> {
  for (const g of gateways)
    await eventually(
      async () => expect((await fetch(`${g.url}/health/ready`)).status).toBe(200),
      30_000,
      100,
    );
}

/** Five requests per team, alternating replicas: exact counters and one record per request. */
export async function accountsEachTeamExactly(gateways: TestGateway[], teams: string[]): Promise<void> {
  const [gw] = gateways;
  await everyReplicaOnRedis(gateways);
  for (const team of teams) {
    const { token } = await gw.teamToken(team);
    for (let i = 0; i < 5; i++) {
      await gateways[i % gateways.length]
        .openai(token)
        .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'one two' }] });
    }
  }
  for (const team of teams) {
    const { total } = await waitForUsageSummary(gw, `team=${team}`, 5);
    // "one two" is 2 prompt words; "echo: one two" 3 completion words, per the stand-in.
    expect(total).toMatchObject({ requests_ok: 5, prompt_tokens: 10, completion_tokens: 15 });
    await waitForUsageRecords(gw, team, 5);
  }
}

/** A 3-per-minute limit holds across the replicas; a token revoked on one is refused on the other. */
export async function limitsAndRevocationHold(gateways: TestGateway[]): Promise<void> {
  const [gw, other] = gateways;
  await everyReplicaOnRedis(gateways);
  const status = (g: TestGateway, token: string) =>
    g
      .openai(token, { maxRetries: 0 })
      .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'x' }] })
      .then(
        () => 200,
        (e: { status: number }) => e.status,
      );

  expect(
    (await gw.admin('POST', '/admin/v1/teams', { id: 'limited', limits: { requestsPerMinute: 3 } })).status,
  ).toBe(201);
  const { token } = await gw.teamToken('limited');
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push(await status(gateways[i % 2], token));
  expect(statuses).toEqual([200, 200, 200, 429, 429]);

  const { token: revoked, id } = await gw.teamToken('revoked-team');
  for (const g of gateways) expect(await status(g, revoked)).toBe(200); // both replicas have it cached
  expect((await gw.admin('DELETE', `/admin/v1/tokens/${id}`)).status).toBe(200);
  // Polled with GET /v1/models, which authenticates but counts nothing; then one chat request, refused. Cached
  // tokens have no TTL, so any bound tells a working invalidation from none: 5 s rather than the promised 1 s,
  // so a loaded 2-core machine cannot fail it.
  await eventually(
    async () => expect((await other.asTeam(revoked, 'GET', '/v1/models')).status).toBe(401),
    5000,
    20,
  );
  expect(await status(other, revoked)).toBe(401);
}

/**
 * Load from eight workers over the replicas; `failover` breaks Redis's master (and resolves once a replica
 * serves) after 100 answers; load goes on for 100 more. Every request must be answered (limits fail open, auth
 * uses the last-known tokens), and the usage must end with exactly one record per request. Prints the numbers.
 */
export async function servesThroughFailover(
  gateways: TestGateway[],
  team: string,
  failover: () => Promise<void>,
): Promise<void> {
  const [gw] = gateways;
  const { token } = await gw.teamToken(team);
  // Every replica has seen the token before the outage (last-known needs a prior sighting).
  for (const g of gateways)
    await g
      .openai(token)
      .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'warm' }] });

  const tally: LoadTally = { sent: 0, answered: 0, failed: {} };
  let failoverMs = 0;
  await loadUntil(
    gateways.map((g) => g.url),
    token,
    8,
    tally,
    async () => {
      await eventually(() => expect(tally.answered).toBeGreaterThan(100), 20_000, 20);
      const started = Date.now();
      await failover();
      failoverMs = Date.now() - started;
      const before = tally.answered;
      await eventually(() => expect(tally.answered).toBeGreaterThan(before + 100), 20_000, 20);
    },
  );

  const expected = tally.answered + gateways.length; // and the warm-up requests
  const { total } = await waitForUsageSummary(gw, `team=${team}`, expected, {
    timeoutMs: 30_000,
    everyMs: 200,
  });
  const records = (await gw.admin('GET', `/admin/v1/usage/records?team=${team}&limit=1000`)).body
    .data as Array<{ id: string }>;
  console.log(
    `failover under load (new master after ${failoverMs} ms): sent ${tally.sent}, answered ${tally.answered}, failed ${JSON.stringify(tally.failed)}; usage: ${total.requests} requests, ${records.length} records`,
  );
  expect(tally.failed).toEqual({});
  expect(tally.sent).toBe(tally.answered);
  expect(total.requests_ok).toBe(expected);
  expect(records).toHaveLength(Math.min(expected, 1000));
  expect(new Set(records.map((r) => r.id)).size).toBe(records.length);
}
