import Anthropic from '@anthropic-ai/sdk';
import { BEDROCK_BETAS } from '../../src/providers/bedrock/bedrock-anthropic';
import { BedrockUpstream } from '../support/bedrock-upstream';
import { eventually } from '../support/eventually';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord } from '../support/usage';

const AWS_KEY = {
  accessKeyId: 'AKIASTANDINEXAMPLE01',
  secretAccessKey: 'standin/Secret+Access/Key0123456789abcdef',
  sessionToken: 'IQoJb3JpZ2luX2VjEStandInSessionToken//0123456789',
};
const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const LLAMA = 'meta.llama3-1-70b-instruct-v1:0';
/** The stand-in's vector for a text (bedrock-upstream.ts). */
const titanVector = (text: string) => Array.from({ length: 8 }, (_, i) => ((text.length + i) % 7) / 7);
const weather = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    },
  },
];

/**
 * The bedrock family through the whole gateway to a Bedrock stand-in that checks SigV4 with its own code and streams
 * AWS event-stream frames cut at awkward byte boundaries: the openai SDK translated to InvokeModel (Claude) and to
 * Converse (Llama), @anthropic-ai/sdk natively on /v1/messages, throttling failover, embeddings, an API key.
 * Credentials come from the environment, as the AWS default credential chain reads them.
 */
describe('AWS Bedrock family', () => {
  let bedrock: BedrockUpstream;
  /** A Bedrock that knows the key id with another secret (a rotated key): every signature mismatches. */
  let rotated: BedrockUpstream;
  let gw: TestGateway;
  let client: ReturnType<TestGateway['openai']>;
  let anthropic: Anthropic;
  const saved = { ...process.env };

  beforeAll(async () => {
    bedrock = await new BedrockUpstream({ keys: [AWS_KEY], apiKey: 'bedrock-api-key-0123456789' }).start();
    rotated = await new BedrockUpstream({
      keys: [{ ...AWS_KEY, secretAccessKey: 'rotated/Secret+Key/0123456789abcdefghij' }],
    }).start();
    process.env.AWS_ACCESS_KEY_ID = AWS_KEY.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = AWS_KEY.secretAccessKey;
    process.env.AWS_SESSION_TOKEN = AWS_KEY.sessionToken;
    const backend = { type: 'bedrock', region: 'us-east-1', baseUrl: bedrock.url };
    gw = await startTestGateway({
      upstreamUrl: bedrock.url,
      config: {
        backends: {
          aws: backend,
          'aws-west': { ...backend, region: 'us-east-1' },
          'aws-wrong-region': { ...backend, region: 'eu-west-1' },
          'aws-key': { ...backend, apiKey: 'bedrock-api-key-0123456789' },
          'aws-rotated': { ...backend, baseUrl: rotated.url },
        },
        models: {
          claude: { backend: 'aws', upstreamModel: CLAUDE, thinking: 'native', maxTokens: 2048 },
          llama: { backend: 'aws', upstreamModel: LLAMA },
          'sonnet-5': {
            backend: 'aws',
            upstreamModel: 'us.anthropic.claude-sonnet-5-v1:0',
            thinking: 'native',
          },
          'claude-failover': {
            routing: 'priority',
            deployments: [
              { backend: 'aws', upstreamModel: 'us.anthropic.claude-throttled-v1:0', priority: 0 },
              { backend: 'aws-west', upstreamModel: CLAUDE, priority: 1 },
            ],
          },
          'claude-throttled': { backend: 'aws', upstreamModel: 'us.anthropic.claude-throttled-v1:0' },
          'claude-midstream': { backend: 'aws', upstreamModel: 'anthropic.claude-midstream-v1:0' },
          'llama-midstream': { backend: 'aws', upstreamModel: 'meta.llama-midstream-v1:0' },
          'claude-wrong-region': { backend: 'aws-wrong-region', upstreamModel: CLAUDE },
          'claude-by-key': { backend: 'aws-key', upstreamModel: CLAUDE },
          'claude-rotated': { backend: 'aws-rotated', upstreamModel: CLAUDE },
          titan: { backend: 'aws', upstreamModel: 'amazon.titan-embed-text-v2:0', kind: 'embedding' },
          cohere: { backend: 'aws', upstreamModel: 'cohere.embed-english-v3', kind: 'embedding' },
        },
      },
    });
    const { token } = await gw.teamToken('bedrock-team');
    client = gw.openai(token);
    anthropic = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await bedrock?.stop();
    await rotated?.stop();
    process.env = saved;
  });

  const lastTo = (operation: string) =>
    [...bedrock.requests].reverse().find((r) => r.path.endsWith(`/${operation}`))!;

  it('signs each call with SigV4 (session token included) and escapes the model id in the path', async () => {
    const answer = await client.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(answer.choices[0].message.content).toBe('echo: hello there');
    const call = lastTo('invoke');
    expect(call.path).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke`);
    expect(call.path).toContain('%3A0');
    expect(call.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIASTANDINEXAMPLE01\//);
    expect(call.headers['x-amz-security-token']).toBe(AWS_KEY.sessionToken);
    expect(bedrock.signedBy.at(-1)).toBe(AWS_KEY.accessKeyId);
  });

  it('translates chat to InvokeModel: no model or stream in the body, bedrock anthropic_version, usage with cache', async () => {
    const answer = await client.chat.completions.create({
      model: 'claude',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'ping pong' },
      ],
    });
    const body = lastTo('invoke').body;
    expect(body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', system: 'be brief' });
    expect(body).not.toHaveProperty('model');
    expect(body).not.toHaveProperty('stream');
    // input 2 words + 2 cache writes + 4 cache reads
    expect(answer.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 3, total_tokens: 11 });
    expect(answer.usage?.prompt_tokens_details?.cached_tokens).toBe(4);
  });

  it('asks the newest Claude models for adaptive thinking with output_config.effort, as Bedrock documents', async () => {
    const answer = await client.chat.completions.create({
      model: 'sonnet-5',
      reasoning_effort: 'high',
      messages: [{ role: 'user', content: 'think adaptively' }],
    });
    expect(answer.choices[0].message.content).toContain('think adaptively');
    const body = lastTo('invoke').body;
    expect(body.thinking).toEqual({ type: 'adaptive' });
    expect(body.output_config).toEqual({ effort: 'high' });
  });

  it('streams InvokeModel chunks decoded from frames split inside preludes and CRCs', async () => {
    const stream = await client.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'one two three four' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('echo: one two three four');
    expect(lastTo('invoke-with-response-stream').headers.accept).toBe('application/vnd.amazon.eventstream');
    expect(usage).toMatchObject({ completion_tokens: 5, prompt_tokens: 4 + 6 });
  });

  it('translates chat to Converse for other models, tools and streaming included', async () => {
    const answer = await client.chat.completions.create({
      model: 'llama',
      messages: [
        { role: 'system', content: 'you are terse' },
        { role: 'user', content: 'hello llama' },
      ],
      max_tokens: 50,
      temperature: 0.3,
    });
    expect(answer.choices[0].message.content).toBe('echo: hello llama');
    // Converse's usage: input 2 + cache read 3 + cache write 5
    expect(answer.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 });
    expect(answer.usage?.prompt_tokens_details?.cached_tokens).toBe(3);
    expect(lastTo('converse').body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'hello llama' }] }],
      system: [{ text: 'you are terse' }],
      inferenceConfig: { maxTokens: 50, temperature: 0.3 },
    });

    const called = await client.chat.completions.create({
      model: 'llama',
      messages: [{ role: 'user', content: 'Paris weather' }],
      tools: weather,
    });
    const call = called.choices[0].message.tool_calls![0];
    expect(called.choices[0].finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function).toMatchObject({
      name: 'get_weather',
      arguments: JSON.stringify({ query: 'Paris weather' }),
    });
    const followUp = await client.chat.completions.create({
      model: 'llama',
      messages: [
        { role: 'user', content: 'Paris weather' },
        called.choices[0].message,
        { role: 'tool', tool_call_id: call.id, content: 'sunny' },
      ],
      tools: weather,
      stream: true,
    });
    let text = '';
    for await (const chunk of followUp) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('tool said: sunny');
    expect(lastTo('converse-stream').body.messages[1].content[0].toolUse).toMatchObject({
      toolUseId: call.id,
      name: 'get_weather',
    });
  });

  it('streams Converse tool calls', async () => {
    const stream = await client.chat.completions.create({
      model: 'llama',
      messages: [{ role: 'user', content: 'Oslo weather' }],
      tools: weather,
      stream: true,
    });
    let args = '';
    let name;
    let finish;
    for await (const chunk of stream) {
      const toolCall = chunk.choices[0]?.delta?.tool_calls?.[0];
      if (toolCall?.function?.name) name = toolCall.function.name;
      args += toolCall?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ query: 'Oslo weather' });
    expect(finish).toBe('tool_calls');
  });

  it('serves the Responses API and thinking through the translation, and lists the models as bedrock', async () => {
    const response = await client.responses.create({ model: 'claude', input: 'respond please' });
    expect(response.output_text).toBe('echo: respond please');
    const converse = await client.responses.create({
      model: 'llama',
      input: 'converse please',
      stream: true,
    });
    let text = '';
    for await (const event of converse) if (event.type === 'response.output_text.delta') text += event.delta;
    expect(text).toBe('echo: converse please');

    const thought = await client.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'deep question' }],
      max_tokens: 1500,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    } as never);
    expect((thought.choices[0].message as { reasoning_content?: string }).reasoning_content).toBe(
      'Let me think about deep question.',
    );
    expect(lastTo('invoke').body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });

    const models = await client.models.list();
    expect(models.data.find((m) => m.id === 'llama')).toMatchObject({ family: 'bedrock' });
  });

  it('every beta the gateway passes is one Bedrock accepts (the stand-in keeps its own list)', async () => {
    const reply = await anthropic.messages.create(
      { model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: 'all the betas' }] },
      { headers: { 'anthropic-beta': [...BEDROCK_BETAS].join(',') } },
    );
    expect(reply.type).toBe('message');
    expect([...lastTo('invoke').body.anthropic_beta].sort()).toEqual([...BEDROCK_BETAS].sort());
  });

  it('passes /v1/messages through natively: betas filtered into anthropic_beta, thinking signatures intact', async () => {
    const first = await anthropic.messages.create(
      {
        model: 'claude',
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'think first' }],
      },
      {
        headers: {
          'anthropic-beta':
            'claude-code-20250219,interleaved-thinking-2025-05-14,advanced-tool-use-2025-11-20,effort-2025-11-24',
        },
      },
    );
    expect(first.model).toBe('claude');
    const thinking = first.content.find((b) => b.type === 'thinking');
    expect(thinking).toMatchObject({ type: 'thinking', signature: expect.stringMatching(/^sig-/) });
    const sent = lastTo('invoke').body;
    expect(sent.anthropic_beta).toEqual(['interleaved-thinking-2025-05-14', 'tool-search-tool-2025-10-19']);
    expect(sent).not.toHaveProperty('model');

    const stream = anthropic.messages.stream({
      model: 'claude',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: 'think first' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: 'and again' },
      ],
    });
    const message = await stream.finalMessage();
    expect(message.content.at(-1)).toMatchObject({ type: 'text', text: 'echo: and again' });
    expect(message.usage).toMatchObject({ cache_read_input_tokens: 4, cache_creation_input_tokens: 2 });
    const replayed = lastTo('invoke-with-response-stream').body.messages[1].content[0];
    expect(replayed).toEqual(thinking);
  });

  it('counts Messages tokens with CountTokens', async () => {
    const counted = await anthropic.messages.countTokens({
      model: 'claude',
      messages: [{ role: 'user', content: 'count these four words' }],
    });
    expect(counted.input_tokens).toBe(4);
    const inner = JSON.parse(lastTo('count-tokens').body.input.invokeModel.body);
    expect(inner).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 1 });
  });

  it('answers /v1/messages for a Converse model through the translation', async () => {
    const message = await anthropic.messages.create({
      model: 'llama',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi from messages' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'echo: hi from messages' });
    expect(lastTo('converse').body.messages[0].content[0]).toEqual({ text: 'hi from messages' });
  });

  it('fails over to the next deployment when Bedrock throttles, and records one request', async () => {
    const { token } = await gw.teamToken('bedrock-failover');
    const before = bedrock.calls({ model: 'us.anthropic.claude-throttled-v1:0' });
    const answer = await gw.openai(token).chat.completions.create({
      model: 'claude-failover',
      messages: [{ role: 'user', content: 'are you there' }],
    });
    expect(answer.choices[0].message.content).toBe('echo: are you there');
    expect(bedrock.calls({ model: 'us.anthropic.claude-throttled-v1:0' })).toBe(before + 1);
    const record = await waitForUsageRecord(gw, 'bedrock-failover');
    expect(record).toMatchObject({ model: 'claude-failover', outcome: 'ok' });

    // With no other deployment, the client gets the 429 (the SDKs retry it), counted like any backend's 429.
    const refused = await client.chat.completions
      .create({ model: 'claude-throttled', messages: [{ role: 'user', content: 'again' }] })
      .catch((error: unknown) => error as { status: number; error: { code: string } });
    expect(refused).toMatchObject({ status: 429, error: { code: 'rate_limit_exceeded' } });
    await eventually(async () =>
      expect(await (await fetch(`${gw.url}/metrics`)).text()).toMatch(
        /switchyard_upstream_errors_total\{backend="aws",reason="rate_limit_exceeded"\} [1-9]/,
      ),
    );
  });

  it('turns a mid-stream exception frame into an in-band error', async () => {
    for (const model of ['claude-midstream', 'llama-midstream']) {
      const stream = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'several words here' }],
        stream: true,
      });
      let text = '';
      await expect(
        (async () => {
          for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
        })(),
      ).rejects.toThrow(model === 'claude-midstream' ? /modelStreamErrorException/ : /rate limiting/);
      expect(text).toBe('echo: ');
    }
    // A Messages client gets it as Anthropic's in-band `error` event, after the text before it.
    const stream = anthropic.messages.stream({
      model: 'claude-midstream',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'several words here' }],
    });
    let text = '';
    stream.on('text', (delta) => (text += delta));
    await expect(stream.finalMessage()).rejects.toThrow(/modelStreamErrorException/);
    expect(text).toBe('echo: ');
  });

  it('is refused with Bedrock 403 when the signature is wrong (another region), as the gateway own 502', async () => {
    const failed = await client.chat.completions
      .create({ model: 'claude-wrong-region', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error as { status: number; message: string });
    expect(failed).toMatchObject({ status: 502 });
    expect(JSON.stringify(failed)).not.toContain(AWS_KEY.sessionToken);
    const log = gw.rawLogs.join('\n');
    expect(log).not.toContain(AWS_KEY.secretAccessKey);
    expect(log).not.toContain(AWS_KEY.sessionToken);
  });

  it("keeps the credentials Bedrock's signature error echoes out of the answer and the logs", async () => {
    const failed = await client.chat.completions
      .create({ model: 'claude-rotated', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => error as { status: number; error: unknown });
    expect(failed).toMatchObject({ status: 502 });
    expect(rotated.calls()).toBe(1); // the deployment's fault: not called again
    const logged = gw.rawLogs.filter((line) => line.includes('aws-rotated')).join('\n');
    // Bedrock's 403 repeats the canonical request, x-amz-security-token included: logged scrubbed.
    expect(logged).toContain('The Canonical String for this request should have been');
    for (const secret of [AWS_KEY.sessionToken, AWS_KEY.secretAccessKey]) {
      expect(JSON.stringify(failed)).not.toContain(secret);
      expect(gw.rawLogs.join('\n')).not.toContain(secret);
    }
  });

  it('sends a Bedrock API key as a Bearer token instead of signing', async () => {
    const answer = await client.chat.completions.create({
      model: 'claude-by-key',
      messages: [{ role: 'user', content: 'by key' }],
    });
    expect(answer.choices[0].message.content).toBe('echo: by key');
    expect(bedrock.signedBy.at(-1)).toBe('api-key');
    expect(lastTo('invoke').headers.authorization).toBe('Bearer bedrock-api-key-0123456789');
  });

  it('embeds with Titan Text Embeddings v2 and Cohere Embed', async () => {
    const titan = await client.embeddings.create({ model: 'titan', input: 'three little words' });
    expect(titan.data[0].embedding).toHaveLength(8);
    expect(titan.usage).toMatchObject({ prompt_tokens: 3, total_tokens: 3 });
    expect(lastTo('invoke').body).toEqual({ inputText: 'three little words' });
    const cohere = await client.embeddings.create({ model: 'cohere', input: ['a b', 'c d e'] });
    expect(cohere.data.map((d) => d.index)).toEqual([0, 1]);
    expect(lastTo('invoke').body).toEqual({ texts: ['a b', 'c d e'], input_type: 'search_document' });
    // Titan embeds one text per call: several inputs are several signed calls, answered together in order.
    const before = bedrock.calls({ model: 'amazon.titan-embed-text-v2:0' });
    const batch = await client.embeddings.create({
      model: 'titan',
      input: ['one', 'two words', 'three more words', 'four', 'five and six'],
      dimensions: 256,
    });
    expect(bedrock.calls({ model: 'amazon.titan-embed-text-v2:0' })).toBe(before + 5);
    expect(batch.data.map((d) => d.index)).toEqual([0, 1, 2, 3, 4]);
    // (the SDK asks for base64, so the floats come back as float32)
    batch.data[2].embedding.forEach((value, i) =>
      expect(value).toBeCloseTo(titanVector('three more words')[i], 6),
    );
    expect(batch.data[2].embedding).not.toEqual(batch.data[3].embedding);
    expect(batch.usage).toMatchObject({ prompt_tokens: 1 + 2 + 3 + 1 + 3 });
    expect(lastTo('invoke').body).toMatchObject({ dimensions: 256 });
    const refused = await client.embeddings
      .create({ model: 'titan', input: [[1, 2, 3]] })
      .catch((error: unknown) => error as { status: number });
    expect(refused).toMatchObject({ status: 400 });
  });
});
