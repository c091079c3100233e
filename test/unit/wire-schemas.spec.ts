import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import {
  ANTHROPIC_SCHEMA_FILE,
  committedAnthropicSchema,
  deriveAnthropicSchema,
  installedSdkVersion,
} from '../support/wire/anthropic-schema';
import {
  checkAnthropic,
  checkOpenAI,
  OPENAI_SPEC_FILE,
  openaiOperationSchema,
} from '../support/wire/vendor-schemas';

/** The vendor schemas the wire recorder checks every exchange against (test/fixtures/wire-schemas/README.md). */
describe('vendor wire schemas', () => {
  it('OpenAI document is the pinned file, byte for byte (git blob of openapi.json at f85dbe2)', () => {
    const bytes = readFileSync(OPENAI_SPEC_FILE);
    const blob = createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
    expect(blob).toBe('81787a35e9c439ed471dc41f3d71c01228a54822');
  });

  it('the Anthropic schema is what the installed SDK types derive to', () => {
    const derived = deriveAnthropicSchema();
    if (process.env.UPDATE_WIRE_SCHEMAS === '1')
      writeFileSync(ANTHROPIC_SCHEMA_FILE, `${JSON.stringify(derived, null, 1)}\n`);
    expect(installedSdkVersion()).toBe(committedAnthropicSchema().sdkVersion);
    expect(committedAnthropicSchema()).toEqual(derived);
  }, 60_000);

  it('finds the schema the OpenAI document gives each served path', () => {
    expect(openaiOperationSchema('/chat/completions', 'post', 200, 'text/event-stream')).toBe(
      'CreateChatCompletionStreamResponse',
    );
    expect(openaiOperationSchema('/responses', 'post', 200, 'text/event-stream')).toBe('ResponseStreamEvent');
    expect(
      openaiOperationSchema('/responses/{response_id}/input_items', 'get', 200, 'application/json'),
    ).toBe('ResponseItemList');
    expect(openaiOperationSchema('/models/{model}', 'get', 200, 'application/json')).toBe('Model');
  });

  // The validators must be able to say no: a body that conforms, then the same body broken in one place.
  it('OpenAI: a chat completion conforms; without message.refusal it does not', () => {
    const completion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'hi', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
    };
    expect(checkOpenAI('CreateChatCompletionResponse', completion)).toBeNull();
    delete (completion.choices[0].message as { refusal?: null }).refusal;
    expect(checkOpenAI('CreateChatCompletionResponse', completion)?.join()).toContain(
      "must have required property 'refusal'",
    );
  });

  it('OpenAI: nullable (OpenAPI 3.0 style) is read as "or null"', () => {
    const chunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: {}, finish_reason: 'stop', logprobs: null }],
    };
    expect(checkOpenAI('CreateChatCompletionStreamResponse', chunk)).toBeNull();
    expect(
      checkOpenAI('CreateChatCompletionStreamResponse', {
        ...chunk,
        choices: [{ ...chunk.choices[0], logprobs: 'x' }],
      }),
    ).not.toBeNull();
  });

  it('Anthropic: a Message with every field the SDK type declares conforms; an extra or a missing field does not', () => {
    const usage = {
      input_tokens: 1,
      output_tokens: 1,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      inference_geo: null,
      output_tokens_details: null,
      server_tool_use: null,
      service_tier: 'standard',
      speed: null,
    };
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [{ type: 'text', text: 'hi', citations: null }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage,
    };
    expect(checkAnthropic('Message', message)).toBeNull();
    expect(checkAnthropic('Message', { ...message, reasoning_content: 'x' })?.join()).toContain(
      'reasoning_content',
    );
    const withoutTier: Record<string, unknown> = { ...usage };
    delete withoutTier.service_tier;
    expect(checkAnthropic('Message', { ...message, usage: withoutTier })?.join()).toContain(
      "must have required property 'service_tier'",
    );
  });
});
