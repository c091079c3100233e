import { OpenAIUpstream } from '../support/openai-upstream';
import { ADMIN_KEY, startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * Guessing the admin key (issue 32, item 3): wrong admin credentials are counted per client address (as resolved
 * with server.trustedProxies only) in Redis, on the admin API and the console sign-in alike. After five in a
 * five-minute window the address is refused (429, Retry-After, OpenAI's error shape) until the window ends, the
 * right key included; every wrong key is counted in switchyard_admin_auth_failures_total and logged at warn,
 * never with the key.
 */
describe('wrong admin keys are throttled per client address', () => {
  jest.setTimeout(120_000);
  let upstream: OpenAIUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({ upstreamUrl: upstream.url });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.stop();
  });

  const adminCall = (url: string, key: string, from?: string) =>
    fetch(`${url}/admin/v1/teams`, {
      headers: { authorization: `Bearer ${key}`, ...(from ? { 'x-forwarded-for': from } : {}) },
    });
  const signIn = (url: string, adminKey: string, from: string) =>
    fetch(`${url}/console/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
      body: JSON.stringify({ adminKey, name: 'guesser' }),
    });
  type ErrorBody = { error: { message: string; type: string; code: string } };
  const errorOf = async (answer: Response) => ((await answer.json()) as ErrorBody).error;
  const metric = async (labels: string) => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith(`switchyard_admin_auth_failures_total{${labels}}`));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  it('lets five wrong keys through as 401, then refuses the address with 429 and Retry-After, 2,000 guesses in all', async () => {
    const guesses = Array.from(
      { length: 2000 },
      (_, i) => `guess-${i}-${Math.random().toString(36).slice(2)}`,
    );
    // The metric is the gateway's, counting the other tests' wrong keys too: this test counts from here.
    const [rejectedBefore, throttledBefore] = [
      await metric('surface="admin_api",outcome="rejected"'),
      await metric('surface="admin_api",outcome="throttled"'),
    ];
    const statuses = new Map<number, number>();
    const refusals: Response[] = [];
    for (let i = 0; i < guesses.length; i += 50) {
      // 50 at a time: guesses in flight together must not slip past the count either.
      const answers = await Promise.all(
        guesses.slice(i, i + 50).map((key) => adminCall(gw.url, key, '203.0.113.50')),
      );
      for (const answer of answers) {
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 429) refusals.push(answer);
        else await answer.body?.cancel();
      }
    }
    expect(Object.fromEntries(statuses)).toEqual({ 401: 5, 429: 1995 });
    const refused = refusals[0];
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(300);
    expect(await refused.json()).toEqual({
      error: {
        message: expect.stringMatching(
          /Too many wrong admin keys or tokens from this address; try again in \d+ s\./,
        ),
        type: 'rate_limit_exceeded',
        param: null,
        code: 'rate_limit_exceeded',
      },
    });

    // The right key from the blocked address is refused too (else the block would not slow guessing: a 200 would
    // still tell the right key from the wrong ones), and so is the console's sign-in from it.
    const rightKey = await adminCall(gw.url, ADMIN_KEY, '203.0.113.50');
    expect(rightKey.status).toBe(429);
    expect(Number(rightKey.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await signIn(gw.url, ADMIN_KEY, '203.0.113.50')).status).toBe(429);

    // Another address, and the gateway's own peer without a forwarded address, are not blocked.
    expect((await adminCall(gw.url, ADMIN_KEY, '203.0.113.51')).status).toBe(200);
    expect((await adminCall(gw.url, ADMIN_KEY)).status).toBe(200);
    expect((await signIn(gw.url, ADMIN_KEY, '203.0.113.51')).status).toBe(201);

    // Counted, and logged at warn with the address, never with a key.
    expect((await metric('surface="admin_api",outcome="rejected"')) - rejectedBefore).toBe(5);
    expect((await metric('surface="admin_api",outcome="throttled"')) - throttledBefore).toBe(1995);
    // This address's lines only: the other tests guess from addresses of their own.
    const fromHere = (line: Record<string, unknown>) => line.level === 40 && line.clientIp === '203.0.113.50';
    const warnings = gw.logs.filter((line) => fromHere(line) && line.msg === 'wrong admin key');
    expect(warnings.length).toBeGreaterThanOrEqual(6); // each judged guess, and the one that blocked the address
    expect(warnings.length).toBeLessThan(100); // a flood of guesses is not a flood of log lines (the metric counts them)
    expect(warnings[0]).toMatchObject({ clientIp: '203.0.113.50', surface: 'admin_api', failures: 1 });
    const logged = gw.rawLogs.join('');
    for (const key of guesses) expect(logged).not.toContain(key);
    expect(logged).not.toContain(ADMIN_KEY);
    expect(
      gw.logs.some(
        (line) =>
          fromHere(line) &&
          line.msg === 'the right admin key was refused: its address is blocked for wrong keys',
      ),
    ).toBe(true);
  });

  it('shares one count between the console sign-in and the admin API, so neither is a way around the other', async () => {
    const before = await metric('surface="console_sign_in",outcome="rejected"');
    for (let i = 0; i < 5; i++) expect((await signIn(gw.url, `wrong-${i}`, '203.0.113.60')).status).toBe(401);
    expect((await adminCall(gw.url, ADMIN_KEY, '203.0.113.60')).status).toBe(429);
    expect((await metric('surface="console_sign_in",outcome="rejected"')) - before).toBe(5);
  });

  it('counts an IPv6 client by its /64, which one host can fill with addresses', async () => {
    for (let i = 1; i <= 5; i++)
      expect((await adminCall(gw.url, `wrong-${i}`, `2001:db8:7:7::${i}`)).status).toBe(401);
    expect((await adminCall(gw.url, 'wrong-6', '2001:db8:7:7:ffff::1')).status).toBe(429);
    expect((await adminCall(gw.url, ADMIN_KEY, '2001:db8:7:8::1')).status).toBe(200);
  });

  it('holds across replicas (the count is in Redis)', async () => {
    const replica = await startTestGateway({ upstreamUrl: upstream.url, prefix: gw.prefix });
    try {
      for (let i = 0; i < 5; i++)
        expect((await adminCall(gw.url, `wrong-${i}`, '203.0.113.70')).status).toBe(401);
      expect((await adminCall(replica.url, ADMIN_KEY, '203.0.113.70')).status).toBe(429);
      expect((await adminCall(replica.url, 'wrong-6', '203.0.113.70')).status).toBe(429);
    } finally {
      await replica.close();
    }
  });

  it('believes X-Forwarded-For only from a trusted proxy: a guesser cannot make up new addresses', async () => {
    const direct = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { server: { trustedProxies: [] } },
    });
    try {
      for (let i = 0; i < 5; i++)
        expect((await adminCall(direct.url, `wrong-${i}`, `198.51.100.${i}`)).status).toBe(401);
      expect((await adminCall(direct.url, 'wrong-6', '198.51.100.99')).status).toBe(429); // all of them were 127.0.0.1
    } finally {
      await direct.close();
    }
  });

  it('counts a team token on the admin API as a wrong admin key like any other, and says what is wrong', async () => {
    // A team token (a live one, and one merely shaped like one) is not the admin key: it must not be a way to
    // guess the admin key, or to probe team tokens, without being throttled.
    const { token } = await gw.teamToken('throttle-team');
    const shaped = `sy-${'0'.repeat(16)}-${'A'.repeat(43)}`;
    const first = await adminCall(gw.url, token, '203.0.113.90');
    expect(first.status).toBe(401);
    const error = await errorOf(first);
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
    // It says what is wrong (not the admin key, and that team tokens are not taken here) and nothing more: the
    // same words for a live team token as for any other wrong key.
    expect(error.message).toMatch(/admin key/);
    expect(error.message).toMatch(/team token/);
    const other = await errorOf(await adminCall(gw.url, 'just-a-guess', '203.0.113.90'));
    expect(other.message).toBe(error.message);
    for (let i = 0; i < 3; i++) expect((await adminCall(gw.url, shaped, '203.0.113.90')).status).toBe(401);
    expect((await adminCall(gw.url, token, '203.0.113.90')).status).toBe(429);
    expect((await adminCall(gw.url, ADMIN_KEY, '203.0.113.90')).status).toBe(429);
  });

  it('tells a caller with no admin key how to send it, without offering x-api-key (the admin API does not read it)', async () => {
    const missing = await fetch(`${gw.url}/admin/v1/teams`, { headers: { 'x-api-key': ADMIN_KEY } });
    expect(missing.status).toBe(401);
    const error = await errorOf(missing);
    expect(error.message).toContain('Authorization: Bearer <admin key>');
    expect(error.message).not.toContain('x-api-key: <token>');
    const malformed = await fetch(`${gw.url}/admin/v1/teams`, { headers: { authorization: ADMIN_KEY } });
    expect((await errorOf(malformed)).message).toContain('Bearer <admin key>');
  });

  it('does not count a request that carries no admin key, nor a console session that ended', async () => {
    for (let i = 0; i < 10; i++)
      expect(
        (await fetch(`${gw.url}/admin/v1/teams`, { headers: { 'x-forwarded-for': '203.0.113.80' } })).status,
      ).toBe(401);
    for (let i = 0; i < 10; i++)
      expect(
        (
          await fetch(`${gw.url}/admin/v1/teams`, {
            headers: { 'x-forwarded-for': '203.0.113.80', cookie: 'sy_console=ended' },
          })
        ).status,
      ).toBe(401);
    expect((await adminCall(gw.url, ADMIN_KEY, '203.0.113.80')).status).toBe(200);
  });
});
