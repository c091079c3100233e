import { untilPast } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForLimitCounter } from '../support/limit-counters';
import { waitForUsageSummary } from '../support/usage';

/** What the gateway reserves for a one-message prompt: OpenAI's chat-format count (o200k_base). */
// What admission reserves for a one-message prompt: OpenAI's format tokens (3 per message, 3 priming the reply)
// plus one token per 3 UTF-8 bytes of its texts (no tokenizer at admission).
const promptEstimate = (content: string) => 3 + 3 + Math.ceil(Buffer.byteLength(`user${content}`) / 3);
const ask = (content: string, max_tokens?: number) => ({
  model: 'echo',
  messages: [{ role: 'user', content }],
  ...(max_tokens ? { max_tokens } : {}),
});

/**
 * Fixed windows: keep a per-minute test inside one minute. Within the minute's last 5 s, waits for the clock to pass
 * the next minute's start (+0.5 s): the window is the clock's, so the clock is the condition.
 */
async function awayFromMinuteEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 55_000) await untilPast(Date.now() - intoMinute + 60_500);
}

describe('quotas and rate limits', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({
      upstreamUrl: upstream.url,
      config: { limits: { defaultCompletionReservation: 50 } },
    });
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  async function teamWith(id: string, limits: object, tokenBody: object = {}): Promise<string> {
    expect((await gw.admin('POST', '/admin/v1/teams', { id, limits })).status).toBe(201);
    return (await gw.admin('POST', `/admin/v1/teams/${id}/tokens`, tokenBody)).body.token;
  }
  const chat = (token: string, body: object) => gw.asTeam(token, 'POST', '/v1/chat/completions', body);

  it('requestsPerMinute: OpenAI-style headers on every response, then 429 rate_limit_exceeded with Retry-After', async () => {
    await awayFromMinuteEdge();
    const token = await teamWith('rpm', { requestsPerMinute: 3 });
    for (const remaining of ['2', '1', '0']) {
      const ok = await chat(token, ask('hi'));
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-ratelimit-limit-requests')).toBe('3');
      expect(ok.headers.get('x-ratelimit-remaining-requests')).toBe(remaining);
      expect(ok.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+s|1m0s)$/); // at most a minute
      expect(ok.headers.get('x-ratelimit-limit-tokens')).toBeNull(); // no token limit configured
    }
    const refused = await chat(token, ask('hi'));
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({
      type: 'rate_limit_exceeded',
      code: 'rate_limit_exceeded',
      param: null,
    });
    expect(refused.body.error.message).toMatch(
      /requestsPerMinute limit of team "rpm" reached \(3\/3 requests used\); it resets at .*Z \(in (\d+s|1m0s)\)/,
    );
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    // The official SDK sees a RateLimitError.
    await expect(gw.openai(token).chat.completions.create(ask('hi') as any)).rejects.toMatchObject({
      status: 429,
      code: 'rate_limit_exceeded',
    });
    const { total } = await waitForUsageSummary(gw, 'team=rpm', 5);
    expect(total).toMatchObject({ requests: 5, requests_ok: 3, requests_rejected: 2, prompt_tokens: 3 });
  });

  it('token limits reserve prompt + max_tokens at admission and settle to the real count', async () => {
    const token = await teamWith('tpd', { tokensPerDay: 200 });
    const first = await chat(token, ask('a b c', 10));
    expect(first.status).toBe(200);
    const reserved1 = promptEstimate('a b c') + 10;
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('200');
    expect(first.headers.get('x-ratelimit-remaining-tokens')).toBe(String(200 - reserved1));
    expect(first.headers.get('x-ratelimit-reset-tokens')).toMatch(/^(\d+h)?(\d+m)?\d+s$/);
    // The stand-in reports 3 prompt + 4 completion tokens ("echo: a b c"): the reservation settles to 7.
    expect(first.body.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    await waitForLimitCounter(gw, 'tpd', 'tokensPerDay', 7);
    const second = await chat(token, ask('x', 20));
    expect(second.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(200 - 7 - (promptEstimate('x') + 20)),
    );
  });

  it('with no max_tokens the configured default completion reservation is used', async () => {
    const token = await teamWith('tpd-default', { tokensPerDay: 1000 });
    const ok = await chat(token, ask('hello there'));
    expect(ok.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(1000 - (promptEstimate('hello there') + 50)),
    );
  });

  it('a spent daily quota answers 429 quota_exceeded naming the limit and its reset', async () => {
    const token = await teamWith('quota', { tokensPerDay: 40 });
    expect((await chat(token, ask('one two', 5))).status).toBe(200); // reserves ~19, settles to 2 + 3 = 5
    await waitForLimitCounter(gw, 'quota', 'tokensPerDay', 5);
    // 5 used: a reservation of promptEstimate + 30 > 35 left is refused, whatever it would really use.
    const refused = await chat(token, ask('one two', 30));
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ type: 'rate_limit_exceeded', code: 'quota_exceeded' });
    expect(refused.body.error.message).toMatch(
      /tokensPerDay limit of team "quota" reached \(5\/40 tokens used, this request reserves \d+\); it resets at \d{4}-\d\d-\d\dT00:00:00.000Z/,
    );
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining-tokens')).toBe('35');
  });

  it('a request that alone exceeds a limit is refused at once, without Retry-After', async () => {
    const token = await teamWith('too-big', { tokensPerMinute: 30 });
    const refused = await chat(token, ask('hi', 100));
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(
      /more than the tokensPerMinute limit .* allows; lower max_tokens/,
    );
    expect(refused.headers.get('retry-after')).toBeNull();
  });

  it("per-token limits apply on top of the team's", async () => {
    await awayFromMinuteEdge();
    const limited = await teamWith('per-token', {}, { limits: { requestsPerMinute: 1 } });
    const free = (await gw.admin('POST', '/admin/v1/teams/per-token/tokens', {})).body.token;
    expect((await chat(limited, ask('hi'))).status).toBe(200);
    const refused = await chat(limited, ask('hi'));
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/requestsPerMinute limit of token [0-9a-f]{16} reached/);
    expect((await chat(free, ask('hi'))).status).toBe(200);
  });

  it('streams carry the headers too, and an aborted or failed request gives back what it did not use', async () => {
    const token = await teamWith('settle', { tokensPerDay: 10_000 });
    const failed = await chat(token, { ...ask('hi', 100), model: 'status-500' });
    expect(failed.status).toBe(502);
    expect(failed.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(10_000 - promptEstimate('hi') - 100),
    );
    // The failed request used nothing, so its whole reservation is released.
    await waitForLimitCounter(gw, 'settle', 'tokensPerDay', 0);
    const stream = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...ask('hi', 100), stream: true }),
    });
    await stream.text();
    expect(stream.headers.get('x-ratelimit-remaining-tokens')).toBe(
      String(10_000 - promptEstimate('hi') - 100),
    );
  });

  it('limits set in the config file seed the team', async () => {
    const seeded = await startTestGateway({
      upstreamUrl: upstream.url,
      prefix: gw.prefix,
      config: {
        server: { port: 0 },
        teams: { seeded: { models: ['echo'], limits: { requestsPerMinute: 7 } } },
      },
    });
    try {
      expect((await seeded.admin('GET', '/admin/v1/teams/seeded')).body).toMatchObject({
        models: ['echo'],
        limits: { requestsPerMinute: 7 },
      });
    } finally {
      await seeded.gateway.shutdown(100);
      await seeded.redis.quit();
    }
  });
});
