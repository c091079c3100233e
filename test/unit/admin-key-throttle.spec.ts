import { Writable } from 'node:stream';
import type Redis from 'ioredis';
import pino from 'pino';
import { ADMIN_KEY_FAILURE_WINDOW_SECONDS, AdminKeyThrottle } from '../../src/auth/admin-key-throttle';
import { throttledAddress } from '../../src/auth/client-address';
import {
  FallingBackFailureCounts,
  MemoryFailureCounts,
  type FailureCounts,
} from '../../src/auth/failure-counts';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import { AppLogger } from '../../src/common/logging/logger';
import { buildConfig } from '../support/config';
import { InFlightTracker } from '../../src/lifecycle/in-flight.tracker';
import { MetricsService } from '../../src/metrics/metrics.service';

const ADMIN_KEY = 'the-admin-key';

/** A throttle over in-memory counts with a clock the test moves, and the log lines it wrote. */
function throttle(counts?: FailureCounts) {
  let now = Date.parse('2026-11-25T12:00:00Z');
  const lines: Array<Record<string, unknown>> = [];
  const logger = new AppLogger(
    'info',
    new Writable({
      write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()),
    }) as any,
  );
  const config = buildConfig({ admin: { apiKey: ADMIN_KEY } }, {});
  const metrics = new MetricsService(config, new InFlightTracker());
  const service = new AdminKeyThrottle(
    config,
    metrics,
    logger,
    counts ?? new MemoryFailureCounts(ADMIN_KEY_FAILURE_WINDOW_SECONDS, () => now),
  );
  const answer = (key: string, ip: string) =>
    service.verify(key, ip, 'admin_api').then(
      () => ({ status: 200, retryAfter: undefined as number | undefined }),
      (error: GatewayException) => ({
        status: error.status,
        retryAfter: error.headers['retry-after'] ? Number(error.headers['retry-after']) : undefined,
      }),
    );
  const failures = async () =>
    (await metrics.registry.getMetricsAsJSON()).find(
      (m) => m.name === 'switchyard_admin_auth_failures_total',
    )!.values;
  return { service, answer, lines, failures, advance: (seconds: number) => (now += seconds * 1000) };
}

describe('AdminKeyThrottle', () => {
  it('answers five wrong keys 401, then refuses the address, the right key included, until its window ends', async () => {
    const t = throttle();
    for (let i = 0; i < 5; i++) expect((await t.answer(`wrong-${i}`, '192.0.2.1')).status).toBe(401);
    expect(await t.answer('wrong-5', '192.0.2.1')).toEqual({ status: 429, retryAfter: 300 });
    t.advance(100);
    expect(await t.answer(ADMIN_KEY, '192.0.2.1')).toEqual({ status: 429, retryAfter: 200 });
    expect((await t.answer(ADMIN_KEY, '192.0.2.2')).status).toBe(200); // another address
    t.advance(200);
    expect((await t.answer(ADMIN_KEY, '192.0.2.1')).status).toBe(200); // the window ended
    expect((await t.answer('wrong-again', '192.0.2.1')).status).toBe(401); // and a new one starts
  });

  it('lets the right key through below the limit and never counts it', async () => {
    const t = throttle();
    for (let i = 0; i < 4; i++) await t.answer(`wrong-${i}`, '192.0.2.1');
    for (let i = 0; i < 20; i++) expect((await t.answer(ADMIN_KEY, '192.0.2.1')).status).toBe(200);
    expect((await t.answer('wrong-4', '192.0.2.1')).status).toBe(401);
    expect((await t.answer(ADMIN_KEY, '192.0.2.1')).status).toBe(429);
  });

  it('judges guesses sent at once by their own count: no more than five are ever answered 401', async () => {
    const t = throttle();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => t.answer(`wrong-${i}`, '192.0.2.1')),
    );
    expect(answers.filter((a) => a.status === 401)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(195);
  });

  it('counts every wrong key in the metric, logs at warn without the key, and does not flood the log', async () => {
    const t = throttle();
    for (let i = 0; i < 1000; i++) await t.answer(`secret-guess-${i}`, '192.0.2.1');
    await t.answer(ADMIN_KEY, '192.0.2.1');
    await t.answer(ADMIN_KEY, '192.0.2.1');
    expect(await t.failures()).toEqual([
      { labels: { surface: 'admin_api', outcome: 'rejected' }, value: 5 },
      { labels: { surface: 'admin_api', outcome: 'throttled' }, value: 995 },
    ]);
    expect(t.lines.every((line) => line.level === 40)).toBe(true);
    const wrong = t.lines.filter((line) => line.msg === 'wrong admin key');
    expect(wrong.map((line) => line.failures)).toEqual([
      1, 2, 3, 4, 5, 6, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000,
    ]);
    expect(wrong[4]).toMatchObject({
      clientIp: '192.0.2.1',
      surface: 'admin_api',
      failures: 5,
      blockedForSeconds: 300,
    });
    expect(
      t.lines.filter(
        (line) => line.msg === 'the right admin key was refused: its address is blocked for wrong keys',
      ),
    ).toHaveLength(1); // once a window
    expect(JSON.stringify(t.lines)).not.toMatch(/secret-guess|the-admin-key/);
  });

  it('counts IPv6 clients by their /64', async () => {
    const t = throttle();
    for (let i = 1; i <= 5; i++) await t.answer('wrong', `2001:db8:1:2::${i}`);
    expect((await t.answer(ADMIN_KEY, '2001:db8:1:2:abcd::9')).status).toBe(429);
    expect((await t.answer(ADMIN_KEY, '2001:db8:1:3::1')).status).toBe(200);
    expect(t.lines[0]).toMatchObject({ clientIp: '2001:db8:1:2::1', countedAs: '2001:db8:1:2::/64' });
  });

  it('counts in this process while Redis fails, rather than stop counting or refuse everyone', async () => {
    const failing: FailureCounts = {
      add: () => Promise.reject(new Error('connection lost')),
      read: () => Promise.reject(new Error('connection lost')),
    };
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const counts = new FallingBackFailureCounts(
      { status: 'ready' } as Redis,
      failing,
      new MemoryFailureCounts(300),
      log,
    );
    const t = throttle(counts);
    expect((await t.answer(ADMIN_KEY, '192.0.2.1')).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await t.answer(`wrong-${i}`, '192.0.2.1')).status).toBe(401);
    expect((await t.answer(ADMIN_KEY, '192.0.2.1')).status).toBe(429);
    expect(lines).toHaveLength(1); // the outage is said once, not per request
    expect(lines[0]).toContain('redis unreachable');
  });
});

describe('MemoryFailureCounts', () => {
  it('keeps at most its bound of addresses, dropping ended windows first, then the oldest', async () => {
    let now = 0;
    const counts = new MemoryFailureCounts(10, () => now, 3);
    await counts.add('a');
    now = 5_000;
    await counts.add('b');
    await counts.add('c');
    now = 11_000; // a's window has ended
    await counts.add('d');
    expect((await counts.read('b')).failures).toBe(1);
    await counts.add('e'); // full of live windows: the oldest (b) goes
    expect((await counts.read('b')).failures).toBe(0);
    expect((await counts.read('e')).failures).toBe(1);
  });
});

describe('throttledAddress', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:0db8:0001:0002:0003:0004:0005:0006', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    [undefined, 'unknown'],
  ])('%s is counted as %s', (ip, expected) => {
    expect(throttledAddress(ip)).toBe(expected);
  });
});
