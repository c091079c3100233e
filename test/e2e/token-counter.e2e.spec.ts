import { countTokens as exactCount } from 'gpt-tokenizer'; // o200k_base, the gateway's counter
import { eventually } from '../support/eventually';
import { OpenAIUpstream } from '../support/openai-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecords } from '../support/usage';
import { TokenCounter } from '../../src/usage/token-counter';
import { tokenizerLoaded } from '../../src/usage/token-estimator';

/**
 * Exact token counts happen only in the token counter's worker, started when a count is needed and stopped when
 * idle: the main thread never loads the encoder's tables (~70 MB), and requests whose upstream reports usage
 * (with token limits or not) never start the worker.
 */
describe('Token counting off the main thread', () => {
  let upstream: OpenAIUpstream;
  let gw: TestGateway;
  let counter: TokenCounter;
  let token: string;

  beforeAll(async () => {
    upstream = await new OpenAIUpstream().start();
    upstream.delayMs = 100;
    gw = await startTestGateway({ upstreamUrl: upstream.url });
    counter = gw.gateway.app.get(TokenCounter);
    counter.idleStopMs = 300;
    expect(
      (await gw.admin('POST', '/admin/v1/teams', { id: 'counted', limits: { tokensPerDay: 1_000_000 } }))
        .status,
    ).toBe(201);
    token = (await gw.admin('POST', '/admin/v1/teams/counted/tokens', {})).body.token;
  });
  afterAll(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('admits, streams and accounts requests with token limits without loading the tokenizer anywhere', async () => {
    const client = gw.openai(token);
    await client.chat.completions.create({
      model: 'echo',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    const stream = await client.chat.completions.create({
      model: 'echo',
      stream: true,
      messages: [{ role: 'user', content: 'hello again' }],
    });
    for await (const _ of stream) void _;
    const records = await waitForUsageRecords(gw, 'counted', 2);
    expect(records.map((record) => record.estimated)).toEqual([false, false]);
    expect(tokenizerLoaded()).toBe(false);
    expect(counter.workerThreadId).toBeUndefined();
  });

  it('counts an abandoned stream exactly in a worker, which stops when idle and starts again when needed', async () => {
    const prompt = 'Count these words exactly, please';
    const expected = 3 + 3 + exactCount('user') + exactCount(prompt); // OpenAI's chat format: per message and reply priming
    const abandon = async () => {
      const controller = new AbortController();
      const stream = await gw
        .openai(token)
        .chat.completions.create(
          { model: 'slow', stream: true, messages: [{ role: 'user', content: prompt }] },
          { signal: controller.signal },
        );
      await stream[Symbol.asyncIterator]().next();
      controller.abort();
    };
    const recordsBefore = (await gw.admin('GET', '/admin/v1/usage/records?team=counted&limit=100')).body.data
      .length;
    const startedBefore = counter.workersStarted;

    await abandon();
    const [first] = await waitForUsageRecords(gw, 'counted', recordsBefore + 1, { timeoutMs: 15_000 }); // the worker loads its tables first
    expect(first).toMatchObject({ outcome: 'aborted', estimated: true, prompt_tokens: expected });
    expect(tokenizerLoaded()).toBe(false); // counted in the worker, not here
    expect(counter.workersStarted).toBe(startedBefore + 1);

    await eventually(() => expect(counter.workerThreadId).toBeUndefined(), 5000); // stopped after 300 ms idle

    await abandon();
    const [second] = await waitForUsageRecords(gw, 'counted', recordsBefore + 2, { timeoutMs: 15_000 });
    expect(second).toMatchObject({ outcome: 'aborted', estimated: true, prompt_tokens: expected });
    // A new worker counted it. (Not its thread id: on a loaded machine it may be idle-stopped again by now.)
    expect(counter.workersStarted).toBe(startedBefore + 2);
  });
});
