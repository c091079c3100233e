import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { BedrockUpstream } from '../support/bedrock-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';
import { waitForUsageRecord } from '../support/usage';
import { VertexUpstream } from '../support/vertex-upstream';

const AWS_KEY = {
  accessKeyId: 'AKIATHREECLOUDS00001',
  secretAccessKey: 'three/Clouds+Secret/Key0123456789abcdefgh',
};

/**
 * One Claude model bought three ways, as an organisation does: on Bedrock first, Vertex next, Anthropic's own API
 * last (`routing: priority`). A throttled cloud (Bedrock's 429 ThrottlingException, Vertex's 429
 * RESOURCE_EXHAUSTED) hands the request to the next, each call in its own cloud's shape and auth, and the request
 * is one usage record with every attempt.
 */
describe('one model on Bedrock, Vertex and Anthropic', () => {
  jest.setTimeout(60_000);
  let bedrock: BedrockUpstream;
  let vertex: VertexUpstream;
  let anthropicApi: AnthropicUpstream;
  let gw: TestGateway;
  let dir: string;
  const saved = { ...process.env };

  beforeAll(async () => {
    [bedrock, vertex, anthropicApi] = await Promise.all([
      new BedrockUpstream({ keys: [AWS_KEY] }).start(),
      new VertexUpstream(71).start(),
      new AnthropicUpstream(72).start(),
    ]);
    process.env.AWS_ACCESS_KEY_ID = AWS_KEY.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = AWS_KEY.secretAccessKey;
    delete process.env.AWS_SESSION_TOKEN;
    dir = mkdtempSync(join(tmpdir(), 'three-clouds-'));
    const vertexBackend = {
      type: 'vertex',
      project: 'three-clouds',
      region: 'us-east5',
      baseUrl: vertex.url,
      credentialsFile: vertex.writeKeyFile(dir),
    };
    gw = await startTestGateway({
      upstreamUrl: anthropicApi.url,
      config: {
        backends: {
          aws: { type: 'bedrock', region: 'us-east-1', baseUrl: bedrock.url },
          gcp: vertexBackend,
          anthropic: { type: 'anthropic', baseUrl: anthropicApi.url, apiKey: '${TEST_UPSTREAM_KEY}' },
        },
        models: {
          'claude-everywhere': {
            routing: 'priority',
            deployments: [
              { backend: 'aws', upstreamModel: 'us.anthropic.claude-throttled-v1:0', priority: 0 },
              { backend: 'gcp', upstreamModel: 'claude-cloud-exhausted', priority: 1 },
              { backend: 'anthropic', upstreamModel: 'claude-echo', priority: 2 },
            ],
          },
          'claude-bedrock-first': {
            routing: 'priority',
            deployments: [
              { backend: 'aws', upstreamModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', priority: 0 },
              { backend: 'gcp', upstreamModel: 'claude-echo', priority: 1 },
              { backend: 'anthropic', upstreamModel: 'claude-echo', priority: 2 },
            ],
          },
        },
      },
    });
  });

  afterAll(async () => {
    await gw?.close();
    await Promise.all([bedrock?.stop(), vertex?.stop(), anthropicApi?.stop()]);
    process.env = saved;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a throttled Bedrock and a throttled Vertex hand the request on to Anthropic: three calls, one record', async () => {
    const client = gw.openai((await gw.teamToken('clouds')).token);
    const text = 'which cloud answers';
    const { data, response } = await client.chat.completions
      .create({ model: 'claude-everywhere', messages: [{ role: 'user', content: text }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe(`echo: ${text}`);
    expect(response.headers.get('x-switchyard-backend')).toBe('anthropic');
    expect(response.headers.get('x-switchyard-attempts')).toBe('3');
    // Each cloud called once, in its own shape: Bedrock InvokeModel (signed), Vertex rawPredict (OAuth), Anthropic.
    expect(bedrock.calls({ containing: text })).toBe(1);
    expect(vertex.calls({ containing: text })).toBe(1);
    expect(anthropicApi.calls({ containing: text })).toBe(1);
    const record = await waitForUsageRecord(gw, 'clouds');
    expect(record).toMatchObject({
      model: 'claude-everywhere',
      backend: 'anthropic',
      upstream_model: 'claude-echo',
      attempts: 3,
      outcome: 'ok',
    });
  });

  it('a Bedrock that answers keeps the request: the other clouds are not called', async () => {
    const client = gw.openai((await gw.teamToken('clouds-bedrock')).token);
    const text = 'bedrock answers first';
    const { data, response } = await client.chat.completions
      .create({ model: 'claude-bedrock-first', messages: [{ role: 'user', content: text }] })
      .withResponse();
    expect(data.choices[0].message.content).toContain(text);
    expect(response.headers.get('x-switchyard-backend')).toBe('aws');
    expect(bedrock.calls({ containing: text })).toBe(1);
    expect(vertex.calls({ containing: text })).toBe(0);
    expect(anthropicApi.calls({ containing: text })).toBe(0);
  });
});
