import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAMILIES } from '../../src/providers/families';
import { AnthropicUpstream } from '../support/anthropic-upstream';
import { AZURE_API_KEY, AzureUpstream } from '../support/azure-upstream';
import { BedrockUpstream } from '../support/bedrock-upstream';
import { GeminiUpstream } from '../support/gemini-upstream';
import { OpenAIUpstream } from '../support/openai-upstream';
import { VertexUpstream } from '../support/vertex-upstream';
import { startTestGateway, type TestGateway } from '../support/test-gateway';

/**
 * Every endpoint on every vendor family, through the official SDKs, so that the vendor-schema checks every test
 * gateway makes (test/support/wire/) see each kind of answer: plain and streamed, text, tool calls and reasoning,
 * stored responses, counts, embeddings, models and errors. The family list comes from the registry
 * (src/providers/families.ts): a family this test does not drive fails it. The last test fails if an endpoint and
 * family pair was not checked at all. (The local family's answers are checked in local-model and local-new-apis,
 * which run the real model.)
 */
const AWS_KEY = {
  accessKeyId: 'AKIASTANDINWIRE00001',
  secretAccessKey: 'standin/Wire+Conformance/Key0123456789ab',
};
/** The families whose answers the real model makes (checked elsewhere, see above). */
const CHECKED_ELSEWHERE = new Set(['local']);

describe("the wire against the vendors' published schemas, every endpoint and family", () => {
  let openaiUp: OpenAIUpstream;
  let anthropicUp: AnthropicUpstream;
  let geminiUp: GeminiUpstream;
  let azureUp: AzureUpstream;
  let vertexUp: VertexUpstream;
  let bedrockUp: BedrockUpstream;
  let keyDir: string;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const savedEnv = { ...process.env };
  /** Each family's models driven through every endpoint (a family with two upstream APIs names both). */
  const models: Record<string, string[]> = {
    openai: ['gpt'],
    anthropic: ['claude'],
    gemini: ['gemini'],
    azure: ['az'],
    vertex: ['vertex-gemini', 'vertex-claude'],
    bedrock: ['bedrock-claude', 'bedrock-llama'],
  };
  const families = Object.entries(models).flatMap(([family, names]) =>
    names.map((model) => [`${family} (${model})`, model]),
  );
  /** Models whose thinking is OpenAI's reasoning_effort: asked through a reasoning sibling, not `thinking`. */
  const reasoningSibling: Record<string, string> = { gpt: 'gpt-reasoner', az: 'az-reasoner' };
  /** Models that cannot think (Converse models configured without `thinking`): asked plainly. */
  const withoutThinking = new Set(['bedrock-llama']);
  const chatTool = [
    {
      type: 'function' as const,
      function: {
        name: 'get_weather',
        description: 'Weather for a city',
        parameters: { type: 'object', properties: { query: { type: 'string' } } },
      },
    },
  ];
  const responsesTool = [
    {
      type: 'function' as const,
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { query: { type: 'string' } } },
      strict: false,
    },
  ];
  const messagesTool = [
    {
      name: 'get_weather',
      description: 'Weather for a city',
      input_schema: { type: 'object' as const, properties: { query: { type: 'string' } } },
    },
  ];

  beforeAll(async () => {
    [openaiUp, anthropicUp, geminiUp, azureUp, vertexUp, bedrockUp] = await Promise.all([
      new OpenAIUpstream().start(),
      new AnthropicUpstream().start(),
      new GeminiUpstream().start(),
      new AzureUpstream().start(),
      new VertexUpstream().start(),
      new BedrockUpstream({ keys: [AWS_KEY] }).start(),
    ]);
    keyDir = mkdtempSync(join(tmpdir(), 'wire-vertex-'));
    // Bedrock's credentials come from the AWS default chain, which reads the environment.
    process.env.AWS_ACCESS_KEY_ID = AWS_KEY.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = AWS_KEY.secretAccessKey;
    delete process.env.AWS_SESSION_TOKEN;
    gw = await startTestGateway({
      upstreamUrl: openaiUp.url,
      config: {
        backends: {
          claude: { type: 'anthropic', baseUrl: anthropicUp.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          google: { type: 'gemini', baseUrl: geminiUp.url, apiKey: '${TEST_UPSTREAM_KEY}' },
          native: {
            type: 'openai',
            baseUrl: openaiUp.url,
            apiKey: '${TEST_UPSTREAM_KEY}',
            responsesApi: true,
          },
          az: { type: 'azure', baseUrl: azureUp.url, apiKey: AZURE_API_KEY },
          vertex: {
            type: 'vertex',
            project: vertexUp.project,
            region: 'us-east5',
            baseUrl: vertexUp.url,
            credentialsFile: vertexUp.writeKeyFile(keyDir),
          },
          aws: { type: 'bedrock', region: 'us-east-1', baseUrl: bedrockUp.url },
        },
        models: {
          gpt: { backend: 'standin', upstreamModel: 'tool-caller' },
          'gpt-reasoner': { backend: 'standin', upstreamModel: 'reasoner', thinking: 'reasoning_effort' },
          'gpt-native': { backend: 'native', upstreamModel: 'tool-caller' },
          claude: { backend: 'claude', upstreamModel: 'claude-echo', thinking: 'native', maxTokens: 4096 },
          'claude-midstream': { backend: 'claude', upstreamModel: 'claude-midstream' },
          gemini: {
            backend: 'google',
            upstreamModel: 'gemini-echo',
            thinking: 'native',
            thinkingBudget: { min: 0, max: 8192 },
          },
          embedder: { backend: 'standin', upstreamModel: 'text-embedding-3-small', kind: 'embedding' },
          'gemini-embedder': { backend: 'google', upstreamModel: 'gemini-embedding-001', kind: 'embedding' },
          az: { backend: 'az', upstreamModel: 'tool-caller' },
          'az-reasoner': { backend: 'az', upstreamModel: 'echo', thinking: 'reasoning_effort' },
          'az-embedder': { backend: 'az', upstreamModel: 'embed', kind: 'embedding' },
          'vertex-gemini': { backend: 'vertex', upstreamModel: 'gemini-echo', thinking: 'native' },
          'vertex-claude': {
            backend: 'vertex',
            upstreamModel: 'claude-echo',
            thinking: 'native',
            maxTokens: 4096,
          },
          'vertex-embedder': { backend: 'vertex', upstreamModel: 'text-embedding-005', kind: 'embedding' },
          'bedrock-claude': {
            backend: 'aws',
            upstreamModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
            thinking: 'native',
            maxTokens: 4096,
          },
          'bedrock-llama': { backend: 'aws', upstreamModel: 'meta.llama3-1-70b-instruct-v1:0' },
          'bedrock-embedder': {
            backend: 'aws',
            upstreamModel: 'amazon.titan-embed-text-v2:0',
            kind: 'embedding',
          },
        },
      },
    });
    const { token } = await gw.teamToken('wire');
    openai = gw.openai(token);
    anthropic = new Anthropic({ apiKey: token, baseURL: gw.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([
      openaiUp?.stop(),
      anthropicUp?.stop(),
      geminiUp?.stop(),
      azureUp?.stop(),
      vertexUp?.stop(),
      bedrockUp?.stop(),
    ]);
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
    process.env = savedEnv;
  });

  it('drives every family in the registry', () => {
    const registered = FAMILIES.map((family) => family.type).filter((type) => !CHECKED_ELSEWHERE.has(type));
    expect(registered.filter((type) => !(type in models))).toEqual([]);
  });

  const drain = async (stream: AsyncIterable<unknown>) => {
    for await (const _ of stream) void _;
  };

  it.each(families)(
    'chat completions, %s: text, tool calls and reasoning, plain and streamed',
    async (_family, model) => {
      const sibling = reasoningSibling[model];
      const thinking =
        sibling || withoutThinking.has(model) ? {} : { thinking: { type: 'enabled', budget_tokens: 2048 } };
      const reasoning = sibling ? { model: sibling } : {};
      await openai.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'hello' }],
        ...thinking,
        ...reasoning,
      } as never);
      await openai.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Oslo' }],
        tools: chatTool,
        tool_choice: 'required',
      });
      const streamed = {
        model,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'hello there' }],
        ...thinking,
        ...reasoning,
      };
      await drain(
        await openai.chat.completions.create(streamed as OpenAI.ChatCompletionCreateParamsStreaming),
      );
      await drain(
        await openai.chat.completions.create({
          model,
          stream: true,
          messages: [{ role: 'user', content: 'Oslo' }],
          tools: chatTool,
          tool_choice: 'required',
        }),
      );
    },
  );

  it.each([...families, ['openai (native Responses)', 'gpt-native']])(
    'responses, %s: created plain and streamed, retrieved, input items listed, deleted',
    async (_family, model) => {
      const first = await openai.responses.create({ model, input: 'Lima', tools: responsesTool });
      const call = first.output.find((item) => item.type === 'function_call');
      const second = await openai.responses.create({
        model,
        previous_response_id: first.id,
        tools: responsesTool,
        input:
          call?.type === 'function_call'
            ? [{ type: 'function_call_output', call_id: call.call_id, output: 'foggy' }]
            : 'and then?',
      });
      await drain(
        openai.responses.stream({
          model,
          input: [{ role: 'user', content: [{ type: 'input_text', text: 'stream me' }] }],
          reasoning: { effort: 'low' },
        }),
      );
      await drain(openai.responses.stream({ model, input: 'Quito', tools: responsesTool }));
      await openai.responses.retrieve(second.id);
      await openai.responses.inputItems.list(second.id);
      await openai.responses.delete(first.id);
    },
  );

  it.each(families)(
    'messages, %s: text, tool use and thinking, plain and streamed; count_tokens',
    async (_family, model) => {
      await anthropic.messages.create({
        model,
        max_tokens: 4000,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        messages: [{ role: 'user', content: 'hello' }],
      });
      const first = await anthropic.messages.create({
        model,
        max_tokens: 200,
        tools: messagesTool,
        messages: [{ role: 'user', content: 'Oslo' }],
      });
      await drain(
        anthropic.messages.stream({
          model,
          max_tokens: 4000,
          thinking: { type: 'enabled', budget_tokens: 2048 },
          messages: [{ role: 'user', content: 'stream me' }],
        }),
      );
      const call = first.content.find((block) => block.type === 'tool_use');
      const followUp: Anthropic.MessageParam[] = call
        ? [
            { role: 'user', content: 'Oslo' },
            { role: 'assistant', content: first.content },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'cold' }] },
          ]
        : [{ role: 'user', content: 'Oslo' }];
      await drain(
        anthropic.messages.stream({ model, max_tokens: 200, tools: messagesTool, messages: followUp }),
      );
      await anthropic.messages.countTokens({ model, messages: [{ role: 'user', content: 'count these' }] });
    },
  );

  it('embeddings (floats and base64), the model list and one model', async () => {
    for (const model of [
      'embedder',
      'gemini-embedder',
      'az-embedder',
      'vertex-embedder',
      'bedrock-embedder',
    ]) {
      await openai.embeddings.create({ model, input: ['one', 'two'] }); // the SDK asks for base64
      await openai.embeddings.create({ model, input: 'three', encoding_format: 'float' });
    }
    await openai.models.list();
    await openai.models.retrieve('claude');
  });

  it("errors: each API's shape, before the stream and in it", async () => {
    await expect(
      openai.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(openai.models.retrieve('nope')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(openai.responses.retrieve('resp_nope')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(
      openai.responses.create({
        model: 'gpt',
        input: [{ type: 'function_call_output', call_id: 'call_x', output: 'x' }],
      }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(
      anthropic.messages.create({
        model: 'nope',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(
      anthropic.messages.create({ model: 'claude', max_tokens: 0.5, messages: [] } as never),
    ).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(
      drain(
        await openai.chat.completions.create({
          model: 'midstream-error',
          stream: true,
          messages: [{ role: 'user', content: 'one two three' }],
        }),
      ),
    ).rejects.toBeInstanceOf(OpenAI.APIError);
    await expect(
      openai.responses.stream({ model: 'midstream-error', input: 'one two three' }).finalResponse(),
    ).rejects.toBeInstanceOf(OpenAI.APIError);
    await expect(
      anthropic.messages
        .stream({
          model: 'claude-midstream',
          max_tokens: 50,
          messages: [{ role: 'user', content: 'one two' }],
        })
        .finalMessage(),
    ).rejects.toBeInstanceOf(Anthropic.APIError);
  });

  it('checked every endpoint on every family against the schemas', async () => {
    await gw.wire.settled();
    const seen = new Set(gw.wire.checked.map((exchange) => `${exchange.kind} ${exchange.family}`));
    const expected = [
      ...['chat', 'chat.stream', 'responses', 'responses.stream', 'messages', 'messages.stream'].flatMap(
        (kind) => Object.keys(models).map((family) => `${kind} ${family}`),
      ),
      ...['openai', 'gemini', 'azure', 'vertex', 'bedrock'].map((family) => `embeddings ${family}`),
      'count_tokens -',
      'models.list -',
      'models.retrieve -',
      'responses.retrieve -',
      'responses.input_items -',
      'error -',
      'error.anthropic -',
    ];
    expect(expected.filter((pair) => !seen.has(pair))).toEqual([]);
    // Every stream's events were checked one by one.
    expect(
      gw.wire.checked
        .filter((exchange) => exchange.kind.endsWith('.stream'))
        .every((exchange) => exchange.events > 3),
    ).toBe(true);
  });
});
