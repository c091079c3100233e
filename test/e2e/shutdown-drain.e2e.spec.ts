import OpenAI from 'openai';
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { deletePrefix, startTestGateway, type TestGateway } from '../support/test-gateway';
import { recordView } from '../../src/usage/usage-record';

/**
 * The end of a SIGTERM drain: requests still running when the grace period ends are ended by the gateway with
 * `server_shutting_down` (in-band for a stream, a 503 otherwise), and accounted as the gateway's doing.
 */
describe('requests still open when the shutdown grace period ends', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    gw = await startTestGateway({ upstreamUrl: upstream.url });
  });
  afterAll(async () => {
    await deletePrefix(gw.redis, gw.prefix);
    await gw.redis.quit();
    await upstream.stop();
  });

  it('a stream ends with an in-band server_shutting_down error, a non-stream with a 503; both recorded as errors with their prompt', async () => {
    const { token } = await gw.teamToken('draining');
    const client = gw.openai(token);
    const ask = {
      model: 'hang',
      messages: [{ role: 'user' as const, content: 'this prompt reached the upstream' }],
    };
    const stream = await client.chat.completions.create({ ...ask, stream: true });
    const plain = client.chat.completions.create(ask).catch((error: unknown) => error);
    await eventually(() => expect(upstream.requests.filter((r) => r.body.model === 'hang')).toHaveLength(2));

    const shutdown = gw.gateway.shutdown(300);
    let streamError: unknown;
    try {
      for await (const chunk of stream) void chunk;
    } catch (error) {
      streamError = error;
    }
    expect(streamError).toBeInstanceOf(OpenAI.APIError);
    expect((streamError as InstanceType<typeof OpenAI.APIError>).code).toBe('server_shutting_down');
    const plainError = (await plain) as InstanceType<typeof OpenAI.APIError>;
    expect(plainError).toBeInstanceOf(OpenAI.APIError);
    expect(plainError.status).toBe(503);
    expect(plainError.code).toBe('server_shutting_down');
    await shutdown;

    const entries = await gw.redis.xrange(`${gw.prefix}usage:{draining}:records`, '-', '+');
    const records = entries.map(([id, fields]) => recordView(id, fields));
    expect(records).toHaveLength(2);
    for (const record of records) {
      expect(record).toMatchObject({
        outcome: 'error',
        error_code: 'server_shutting_down',
        model: 'hang',
        estimated: true,
      });
      expect(record.prompt_tokens).toBeGreaterThan(5);
    }
    // The upstream calls were cancelled, not left running.
    await eventually(() => expect(upstream.aborted.filter((r) => r.body.model === 'hang')).toHaveLength(2));
  });
});
