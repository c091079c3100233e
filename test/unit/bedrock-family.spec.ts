import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import type { ModelConfig } from '../../src/config/config.schema';
import { BedrockAdapter } from '../../src/providers/bedrock/bedrock.adapter';
import { BEDROCK_BETAS, bedrockBetas, invokeBody } from '../../src/providers/bedrock/bedrock-anthropic';
import { BedrockBackendConfig } from '../../src/providers/bedrock/bedrock.config';
import { EventStreamFrames } from '../../src/providers/bedrock/event-stream';
import { isAnthropicModel, modelPath } from '../../src/providers/bedrock/bedrock-paths';
import { toConverseBody } from '../../src/providers/bedrock/converse.request';
import { eventFrame, eventStreamFrame, exceptionFrame } from '../support/aws-event-stream';
import { SIGNATURE_MISMATCH, verifySigV4 } from '../support/aws-sigv4-check';
import { bodyOf, decodeAll } from '../support/stream-decoding';
import { buildConfig } from '../support/config';
import { bedrockBaseUrl } from '../../src/providers/bedrock/bedrock.config';

const config = Object.assign(new BedrockBackendConfig(), {
  type: 'bedrock',
  region: 'us-east-1',
  baseUrl: 'http://bedrock.invalid',
});
const adapter = new BedrockAdapter('aws', config);
const model = { maxTokens: 1000, thinking: 'none' } as ModelConfig;
const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

/** Every byte boundary of `bytes` as a cut: each frame arrives in every possible pair of reads. */
function everySplit(bytes: Buffer): Uint8Array[][] {
  return Array.from({ length: bytes.length - 1 }, (_, i) => [
    bytes.subarray(0, i + 1),
    bytes.subarray(i + 1),
  ]);
}

const chunkFrame = (event: object) =>
  eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abc' });

describe('the AWS event-stream frame decoder', () => {
  const frames = [
    eventFrame('messageStart', { role: 'assistant' }),
    eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Grüße 🙂' } }),
  ];
  const wire = Buffer.concat(frames);

  it('reassembles frames cut at every byte (inside a prelude, the headers, the payload, a CRC)', () => {
    for (const reads of everySplit(wire)) {
      const decoder = new EventStreamFrames();
      const decoded = reads.flatMap((read) => decoder.push(read));
      expect(decoded.map((f) => f.headers[':event-type'])).toEqual(['messageStart', 'contentBlockDelta']);
      expect(JSON.parse(Buffer.from(decoded[1].payload).toString('utf8')).delta.text).toBe('Grüße 🙂');
      expect(decoder.incomplete).toBe(false);
    }
  });

  it('reads a frame delivered a byte at a time, and several frames in one read', () => {
    const decoder = new EventStreamFrames();
    const decoded = [...wire].flatMap((byte) => decoder.push(Uint8Array.of(byte)));
    expect(decoded).toHaveLength(2);
    expect(new EventStreamFrames().push(Buffer.concat([wire, wire]))).toHaveLength(4);
  });

  it('refuses a frame whose message CRC does not match', () => {
    const corrupt = Buffer.from(frames[1]);
    corrupt[corrupt.length - 6] ^= 0x01; // a payload byte: the message CRC no longer matches
    expect(() => new EventStreamFrames().push(corrupt)).toThrow(/checksum/);
  });

  it('refuses a corrupt prelude as soon as its 12 bytes are in, not after waiting for its length', () => {
    const corrupt = Buffer.from(frames[0]);
    corrupt[2] ^= 0x40; // the total length: the prelude CRC no longer matches
    expect(() => new EventStreamFrames().push(corrupt.subarray(0, 12))).toThrow(/prelude checksum/);
  });

  it('says when the body ended inside a frame', () => {
    const decoder = new EventStreamFrames();
    decoder.push(frames[0].subarray(0, 20));
    expect(decoder.incomplete).toBe(true);
  });
});

describe('the Bedrock stream decoder', () => {
  it('decodes InvokeModel chunks into chunks and keeps the Anthropic event for a native client', async () => {
    const wire = Buffer.concat([
      chunkFrame({
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude',
          content: [],
          usage: { input_tokens: 3, output_tokens: 1 },
        },
      }),
      chunkFrame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      chunkFrame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello' } }),
      chunkFrame({ type: 'content_block_stop', index: 0 }),
      chunkFrame({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }),
      chunkFrame({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 3 } }),
    ]);
    for (const reads of everySplit(wire).filter((_, i) => i % 7 === 0)) {
      const { steps, error } = await decodeAll(adapter, bodyOf(reads), { request, native: 'messages' });
      expect(error).toBeUndefined();
      const text = steps.flatMap((s) => s.chunks.map((c) => c.choices[0]?.delta?.content ?? '')).join('');
      expect(text).toBe('hello');
      expect(steps.at(-1)).toMatchObject({
        done: true,
        upstream: { event: 'message_stop', data: '{"type":"message_stop"}' },
      });
      expect(steps.at(-1)!.chunks[0].usage).toMatchObject({
        prompt_tokens: 3,
        completion_tokens: 2,
        total_tokens: 5,
      });
      const start = JSON.parse(steps[0].upstream!.data);
      expect(start.message).toMatchObject({
        container: null,
        stop_details: null,
        usage: { input_tokens: 3, service_tier: null },
      });
    }
  });

  it('throws an exception frame as an in-band error after the steps before it', async () => {
    const wire = Buffer.concat([
      eventFrame('messageStart', { role: 'assistant' }),
      eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'partial' } }),
      exceptionFrame('throttlingException', 'Too many tokens'),
    ]);
    const { steps, error } = await decodeAll(adapter, bodyOf([wire]), { request });
    expect(steps.flatMap((s) => s.chunks.map((c) => c.choices[0]?.delta?.content ?? '')).join('')).toBe(
      'partial',
    );
    expect(error).toBeInstanceOf(GatewayException);
    expect(error).toMatchObject({
      status: 429,
      message: expect.stringContaining('throttlingException: Too many tokens'),
    });
    const streamError = await decodeAll(
      adapter,
      bodyOf([exceptionFrame('modelStreamErrorException', 'boom')]),
      { request },
    );
    expect(streamError.error).toMatchObject({ status: 502 });
  });

  it('reports a corrupt frame and a body cut inside a frame as a malformed stream', async () => {
    const frame = Buffer.from(eventFrame('messageStart', { role: 'assistant' }));
    frame[frame.length - 1] ^= 0xff;
    expect((await decodeAll(adapter, bodyOf([frame]), { request })).error).toMatchObject({
      code: 'upstream_error',
    });
    const cut = eventFrame('messageStart', { role: 'assistant' }).subarray(0, 30);
    expect((await decodeAll(adapter, bodyOf([cut]), { request })).error).toMatchObject({
      message: expect.stringContaining('ended inside a frame'),
    });
  });

  it('reads ConverseStream events: text, tool calls, finish reason, usage with cache reads and writes', async () => {
    const wire = [
      eventFrame('messageStart', { role: 'assistant', p: 'ab' }),
      eventFrame('contentBlockStart', {
        contentBlockIndex: 0,
        start: { toolUse: { toolUseId: 't1', name: 'get' } },
      }),
      eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"q":' } } }),
      eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '1}' } } }),
      eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
      eventFrame('messageStop', { stopReason: 'tool_use' }),
      eventFrame('metadata', {
        usage: {
          inputTokens: 10,
          outputTokens: 4,
          totalTokens: 21,
          cacheReadInputTokens: 5,
          cacheWriteInputTokens: 2,
        },
      }),
    ];
    const { steps } = await decodeAll(adapter, bodyOf(wire), { request });
    const deltas = steps.flatMap((s) =>
      s.chunks.map((c) => c.choices[0] as { delta: any; finish_reason: string | null } | undefined),
    );
    expect(deltas[1]?.delta.tool_calls?.[0]).toMatchObject({
      index: 0,
      id: 't1',
      function: { name: 'get', arguments: '' },
    });
    expect(deltas.map((d) => d?.delta?.tool_calls?.[0]?.function?.arguments ?? '').join('')).toBe('{"q":1}');
    expect(deltas.find((d) => d?.finish_reason)?.finish_reason).toBe('tool_calls');
    expect(steps.at(-1)).toMatchObject({ done: true });
    expect(steps.at(-1)!.chunks[0].usage).toMatchObject({
      prompt_tokens: 17,
      completion_tokens: 4,
      total_tokens: 21,
      prompt_tokens_details: { cached_tokens: 5, cache_write_tokens: 2 },
    });
  });
});

describe('Converse translation', () => {
  it('maps a chat request: system blocks, alternating turns, tools, tool results, sampling', () => {
    const body = toConverseBody(
      {
        model: 'm',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'weather?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'get', arguments: '{"city":"Oslo"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'rain' },
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBO' } }],
          },
        ],
        tools: [{ type: 'function', function: { name: 'get', parameters: { type: 'object' } } }],
        tool_choice: 'required',
        max_tokens: 20,
        top_p: 0.5,
        stop: 'END',
      },
      { upstreamModel: 'meta.llama', model },
    );
    expect(body).toEqual({
      system: [{ text: 'be brief' }],
      messages: [
        { role: 'user', content: [{ text: 'weather?' }] },
        {
          role: 'assistant',
          content: [{ toolUse: { toolUseId: 'c1', name: 'get', input: { city: 'Oslo' } } }],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'c1', content: [{ text: 'rain' }] } },
            { image: { format: 'png', source: { bytes: 'iVBO' } } },
          ],
        },
      ],
      inferenceConfig: { maxTokens: 20, topP: 0.5, stopSequences: ['END'] },
      toolConfig: {
        tools: [{ toolSpec: { name: 'get', inputSchema: { json: { type: 'object' } } } }],
        toolChoice: { any: {} },
      },
    });
  });

  it('reads a Converse answer back as a chat completion', () => {
    const completion = adapter.parseResponse({
      output: {
        message: {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'hmm', signature: 's' } } },
            { text: 'it rains' },
            { toolUse: { toolUseId: 't', name: 'get', input: { a: 1 } } },
          ],
        },
      },
      stopReason: 'max_tokens',
      usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
    });
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'length',
      message: {
        content: 'it rains',
        reasoning_content: 'hmm',
        tool_calls: [{ id: 't', type: 'function', function: { name: 'get', arguments: '{"a":1}' } }],
      },
    });
    expect(completion.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
  });

  it('refuses URL images before any call (Converse takes inline bytes only)', () => {
    expect(() =>
      adapter.validate(
        {
          model: 'm',
          messages: [
            { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
          ],
        },
        { upstreamModel: 'meta.llama', model },
      ),
    ).toThrow(/inline/);
  });
});

describe('Claude on Bedrock', () => {
  it('keeps only the betas Bedrock accepts, renamed where Bedrock names them otherwise', () => {
    expect(
      bedrockBetas([
        'claude-code-20250219, interleaved-thinking-2025-05-14',
        'advanced-tool-use-2025-11-20,effort-2025-11-24,tool-search-tool-2025-10-19,prompt-caching-2024-07-31',
      ]),
    ).toEqual(['interleaved-thinking-2025-05-14', 'tool-search-tool-2025-10-19']);
    expect(bedrockBetas(undefined)).toEqual([]);
    for (const beta of BEDROCK_BETAS) expect(bedrockBetas(beta)).toEqual([beta]);
  });

  it('builds the InvokeModel body: no model or stream, anthropic_version, Anthropic-only members left out, effort kept', () => {
    const thinking = { type: 'thinking', thinking: 'x', signature: 'sig-AbC/+=' };
    const body = invokeBody(
      {
        model: 'claude',
        stream: true,
        max_tokens: 10,
        metadata: { user_id: 'u' },
        output_config: { effort: 'high', format: { type: 'json_schema' } },
        messages: [{ role: 'assistant', content: [thinking] }],
      },
      ['context-1m-2025-08-07'],
    );
    expect(body).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['context-1m-2025-08-07'],
      max_tokens: 10,
      // Bedrock documents output_config.effort (adaptive thinking's depth), nothing else of it.
      output_config: { effort: 'high' },
      messages: [{ role: 'assistant', content: [thinking] }],
    });
  });

  it("sends a native Messages body's members as the client's own bytes (escapes and spacing kept)", () => {
    const messages = `[ {"role":"user","content":"caf\\u00e9 ${'x'.repeat(20_000)}"} ]`;
    const client = `{"model":"us.anthropic.claude-v1:0","max_tokens":10,"stream":true,"metadata":{"user_id":"u"},"messages":${messages}}`;
    const call = adapter.nativeCall({
      api: 'messages',
      body: Buffer.from(client),
      stream: true,
      clientHeaders: { 'anthropic-beta': 'claude-code-20250219,context-1m-2025-08-07' },
    });
    expect(call.path).toBe('/model/us.anthropic.claude-v1%3A0/invoke-with-response-stream');
    const sent = call.body.toString();
    expect(sent).toContain(`"messages":${messages}`);
    expect(JSON.parse(sent)).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['context-1m-2025-08-07'],
      max_tokens: 10,
      messages: JSON.parse(messages),
    });
  });

  it('knows its models by the anthropic publisher, inference profiles and ARNs included, or by the backend list', () => {
    for (const id of [
      'anthropic.claude-sonnet-4-5-20250929-v1:0',
      'global.anthropic.claude-sonnet-4-5-20250929-v1:0',
      'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0',
    ])
      expect(isAnthropicModel(id, config)).toBe(true);
    expect(isAnthropicModel('meta.llama3-1-70b-instruct-v1:0', config)).toBe(false);
    const profile = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123';
    expect(isAnthropicModel(profile, config)).toBe(false);
    expect(
      isAnthropicModel(
        profile,
        Object.assign(new BedrockBackendConfig(), { ...config, anthropicModels: [profile] }),
      ),
    ).toBe(true);
    expect(modelPath(profile, 'invoke')).toBe(
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fabc123/invoke',
    );
  });

  it('speaks Messages natively only for its Claude models', () => {
    expect(adapter.speaksNatively('messages', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(true);
    expect(adapter.speaksNatively('messages', 'meta.llama3-1-70b-instruct-v1:0')).toBe(false);
  });

  it('maps Bedrock HTTP errors by status: throttling is a retryable 429, a validation error passes its words on', () => {
    const throttled = adapter.mapError(429, '{"message":"Too many requests"}', {
      'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/',
    });
    expect(throttled).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    const invalid = adapter.mapError(400, '{"message":"Malformed input request"}', {});
    expect(invalid).toMatchObject({ status: 400, message: 'Malformed input request' });
    expect(adapter.mapError(403, '{"message":"denied"}', {})).toMatchObject({
      status: 502,
      deploymentFault: true,
    });
  });
});

describe("the stand-in's own SigV4 check against the AWS SDK's signer", () => {
  const key = {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
    sessionToken: 'tok',
  };
  const signer = new SignatureV4({
    service: 'bedrock',
    region: 'us-east-1',
    credentials: key,
    sha256: Sha256,
  });
  const path = `/model/${encodeURIComponent('us.anthropic.claude-v1:0')}/invoke`;
  const body = '{"max_tokens":1}';

  async function signed() {
    return signer.sign({
      method: 'POST',
      protocol: 'http:',
      hostname: '127.0.0.1:9',
      path,
      query: {},
      headers: { host: '127.0.0.1:9', 'content-type': 'application/json' },
      body,
    });
  }
  const verify = (headers: Record<string, string>, url = path, sent = body) =>
    verifySigV4({
      method: 'POST',
      url,
      headers,
      body: Buffer.from(sent),
      keys: [key],
      region: 'us-east-1',
      service: 'bedrock',
    });

  it("accepts what the signer signed and refuses a changed body, path or header with Bedrock's words", async () => {
    const { headers } = await signed();
    expect(verify(headers)).toEqual({ ok: true, accessKeyId: 'AKIDEXAMPLE' });
    for (const verdict of [
      verify(headers, path, '{"max_tokens":2}'),
      verify(headers, path.replace('invoke', 'converse')),
      verify({ ...headers, 'content-type': 'text/plain' }),
    ])
      expect(verdict).toEqual({
        ok: false,
        status: 403,
        errorType: 'InvalidSignatureException',
        message: expect.stringContaining(
          `${SIGNATURE_MISMATCH}\n\nThe Canonical String for this request should have been\n'POST\n/model/`,
        ),
      });
    expect(verify({ ...headers, 'x-amz-security-token': 'other' })).toMatchObject({
      ok: false,
      errorType: 'UnrecognizedClientException',
    });
  });

  it('encodes frames the codec reads (two implementations of the framing agree)', () => {
    const frame = eventStreamFrame({ ':message-type': 'event', ':event-type': 'x' }, 'payload');
    expect(new EventStreamFrames().push(frame)[0]).toMatchObject({ headers: { ':event-type': 'x' } });
  });
});

describe('the bedrock adapter scrubs its backend keys', () => {
  const API_KEY = 'bdrk9f8e7d6c5b4a39281706zz';
  const keyed = new BedrockAdapter(
    'aws',
    Object.assign(new BedrockBackendConfig(), { ...config, apiKey: API_KEY }),
  );
  const said = `The key ${API_KEY} is not allowed here`;
  const leaks = (error: GatewayException) =>
    JSON.stringify({ body: error.toBody(), upstream: error.upstream, headers: error.headers });

  it.each([400, 403, 429, 500])('from an HTTP %i answer', (status) => {
    const error = keyed.mapError(status, JSON.stringify({ message: said }), {
      'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/',
    });
    expect(leaks(error)).not.toContain(API_KEY);
    expect(error.upstream?.message).toBe('ValidationException: The key [redacted] is not allowed here');
  });

  it('from an exception frame in a stream', async () => {
    const { error } = await decodeAll(keyed, bodyOf([exceptionFrame('validationException', said)]), {
      request,
    });
    expect(leaks(error as GatewayException)).not.toContain(API_KEY);
    expect((error as GatewayException).upstream?.message).toBe(
      'validationException: The key [redacted] is not allowed here',
    );
  });
});

describe('a bedrock backend in the config', () => {
  const load = (backend: Record<string, unknown>) =>
    buildConfig({ admin: { apiKey: 'k' }, backends: { aws: { type: 'bedrock', ...backend } } });

  it("needs a region; its base URL defaults to the region's Bedrock Runtime endpoint", () => {
    const aws = load({ region: 'eu-central-1' }).backends.aws as BedrockBackendConfig;
    expect(bedrockBaseUrl(aws)).toBe('https://bedrock-runtime.eu-central-1.amazonaws.com');
    const vpc = load({
      region: 'us-gov-west-1',
      baseUrl: 'https://vpce-1.bedrock-runtime.us-gov-west-1.vpce.amazonaws.com',
    });
    expect(bedrockBaseUrl(vpc.backends.aws as BedrockBackendConfig)).toMatch(/^https:\/\/vpce-1\./);
    expect(() => load({})).toThrow(/backends\.aws\.region: must be set to an AWS region such as us-east-1/);
    expect(() => load({ region: 'US East' })).toThrow(/backends\.aws\.region/);
    expect(() => load({ region: 'us-east-1', baseUrl: 'not a url' })).toThrow(/backends\.aws\.baseUrl/);
    expect(() => load({ region: 'us-east-1', anthropicVersion: '2023-06-01' })).toThrow(/anthropicVersion/);
  });
});
