import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { startTestDatabase, type TestDatabase } from '../support/postgres';
import { eventually } from '../support/eventually';

/**
 * The gateway with its request log in PostgreSQL (a database of its own on the test server): entries and content
 * written through the app and read back through the admin API and /v1/requests; and with a PostgreSQL that takes
 * connections and never answers, requests are not held up and the entries it cannot take are counted.
 */
describe('request log in PostgreSQL, through the gateway', () => {
  jest.setTimeout(90_000);
  let upstream: OpenAIUpstream;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
  });
  afterAll(async () => {
    await upstream.stop();
  });

  describe('a working server', () => {
    let database: TestDatabase;
    let gw: TestGateway;
    beforeAll(async () => {
      database = await startTestDatabase();
      gw = await startTestGateway({
        upstreamUrl: upstream.url,
        config: { logging: { requests: { store: 'postgres', postgres: { url: database.url } } } },
      });
    });
    afterAll(async () => {
      await gw?.close();
      await database?.drop();
    });

    it('keeps the entries and, for a team that asks, the redacted content; a team reads its own', async () => {
      const team = `pg-${randomBytes(4).toString('hex')}`;
      expect(
        (await gw.admin('POST', '/admin/v1/teams', { id: team, logging: { content: 'full' } })).status,
      ).toBe(201);
      const issued = await gw.admin('POST', `/admin/v1/teams/${team}/tokens`, { name: 'pg bot' });
      const client = gw.openai(issued.body.token);
      await client.chat.completions.create({
        model: 'echo',
        messages: [{ role: 'user', content: 'one for bob@example.com' }],
      });
      await client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'two' }] });
      const page = await eventually(async () => {
        const found = await gw.admin('GET', `/admin/v1/requests?team=${team}`);
        expect(found.body.data).toHaveLength(2);
        return found.body;
      }, 15_000);
      expect(page.data.map((entry: any) => entry.usage)).toEqual([
        {
          prompt: 1,
          completion: 2,
          reasoning: 0,
          cached: 0,
          cacheWrite: 0,
          cacheWrite1h: 0,
          estimated: false,
        },
        {
          prompt: 3,
          completion: 4,
          reasoning: 0,
          cached: 0,
          cacheWrite: 0,
          cacheWrite1h: 0,
          estimated: false,
        },
      ]);
      expect(page.data[1]).toMatchObject({
        token: { id: issued.body.id, name: 'pg bot' },
        contentKept: true,
        status: 200,
      });
      const one = await gw.admin('GET', `/admin/v1/requests/${page.data[1].id}`);
      expect(one.body.content.request.messages).toEqual([{ role: 'user', content: 'one for [email]' }]);
      const own = await gw.asTeam(issued.body.token, 'GET', '/v1/requests?limit=1');
      expect(own.body.data.map((entry: any) => entry.id)).toEqual([page.data[0].id]);
      expect(own.body.next).toEqual(expect.any(String));
      const rest = await gw.asTeam(issued.body.token, 'GET', `/v1/requests?limit=1&after=${own.body.next}`);
      expect(rest.body.data.map((entry: any) => entry.id)).toEqual([page.data[1].id]);
    });
  });

  describe('a server that takes connections and never answers', () => {
    let silent: Server;
    const sockets = new Set<Socket>();
    let gw: TestGateway;
    beforeAll(async () => {
      silent = createServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const port = (silent.address() as { port: number }).port;
      gw = await startTestGateway({
        upstreamUrl: upstream.url,
        config: {
          logging: {
            requests: {
              store: 'postgres',
              queueSize: 100,
              postgres: { url: `postgres://sy@127.0.0.1:${port}/sy` },
            },
          },
        },
      });
    });
    afterAll(async () => {
      await gw?.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });

    it('answers every request as soon as the backend does, and counts what it could not keep', async () => {
      const { token } = await gw.teamToken('pg-down');
      const client = gw.openai(token, { maxRetries: 0 });
      const slowest: number[] = [];
      // 250 requests: the writer holds one batch (100) in its store call and 100 more in its queue; the rest are dropped.
      for (let round = 0; round < 25; round++) {
        const started = performance.now();
        await Promise.all(
          Array.from({ length: 10 }, () =>
            client.chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: 'hi' }] }),
          ),
        );
        slowest.push(performance.now() - started);
      }
      // The store's first call waits 5 s for a connection that never comes: no request waited for it.
      expect(Math.max(...slowest)).toBeLessThan(2_500);
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      const droppedFull = Number(
        /switchyard_request_log_dropped_total\{reason="queue_full"\} (\d+)/.exec(metrics)?.[1],
      );
      expect(droppedFull).toBeGreaterThanOrEqual(50);
      expect(Number(/switchyard_request_log_queued_entries (\d+)/.exec(metrics)?.[1])).toBe(100);
      // The usage records, which do not go through the request log, are all there.
      await eventually(async () => {
        const usage = await gw.asTeam(token, 'GET', '/v1/usage');
        expect(usage.body.total.requests).toBe(250);
      }, 10_000);
    });
  });
});
