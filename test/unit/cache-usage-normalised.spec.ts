import { usageOf as anthropicUsage } from '../../src/providers/anthropic/anthropic.response';
import { AnthropicStreamMapper } from '../../src/providers/anthropic/anthropic.stream';
import { converseUsage } from '../../src/providers/bedrock/converse.response';
import { usageOf as geminiUsage } from '../../src/providers/gemini/gemini.response';
import { usageFromResponses } from '../../src/providers/openai/responses-upstream';
import { messagesUsage } from '../../src/endpoints/messages/chat-to-messages';
import { responseUsage } from '../../src/endpoints/responses/response-object';
import { chatClientUsage, type Usage } from '../../src/core/openai-types';
import { GatewayException } from '../../src/core/errors/gateway.exception';

/**
 * Usage normalised from every family's own report: prompt_tokens = uncached + cache reads + cache writes, reads in
 * cached_tokens, writes in cache_write_tokens, their 1-hour part in cache_write_1h_tokens (the gateway's own member);
 * and back out in each client's wire. Expected values are written from the vendors' documented meanings.
 */
describe('cache usage, normalised per family', () => {
  it('Anthropic: input_tokens excludes the cache; writes split by lifetime in cache_creation', () => {
    expect(
      anthropicUsage({
        input_tokens: 10,
        cache_read_input_tokens: 900,
        cache_creation_input_tokens: 80,
        cache_creation: { ephemeral_5m_input_tokens: 50, ephemeral_1h_input_tokens: 30 },
        output_tokens: 5,
      }),
    ).toEqual({
      prompt_tokens: 990,
      completion_tokens: 5,
      total_tokens: 995,
      prompt_tokens_details: { cached_tokens: 900, cache_write_tokens: 80, cache_write_1h_tokens: 30 },
    });
  });

  it("Anthropic stream: message_delta's null cache counts do not wipe message_start's", () => {
    const mapper = new AnthropicStreamMapper(() => new GatewayException('upstream_error', 'x'));
    const event = (data: object) => ({ data: JSON.stringify(data) }) as never;
    mapper.map(
      event({
        type: 'message_start',
        message: {
          id: 'm',
          model: 'c',
          usage: {
            input_tokens: 10,
            cache_read_input_tokens: 900,
            cache_creation_input_tokens: 80,
            cache_creation: { ephemeral_5m_input_tokens: 50, ephemeral_1h_input_tokens: 30 },
            output_tokens: 1,
          },
        },
      }),
    );
    mapper.map(
      event({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        usage: { output_tokens: 7, cache_read_input_tokens: null, cache_creation_input_tokens: null },
      }),
    );
    const [last] = mapper.map(event({ type: 'message_stop' })).chunks;
    expect(last.usage).toEqual({
      prompt_tokens: 990,
      completion_tokens: 7,
      total_tokens: 997,
      prompt_tokens_details: { cached_tokens: 900, cache_write_tokens: 80, cache_write_1h_tokens: 30 },
    });
  });

  it('Bedrock Converse: inputTokens excludes cacheReadInputTokens and cacheWriteInputTokens', () => {
    expect(
      converseUsage({
        inputTokens: 10,
        outputTokens: 5,
        cacheReadInputTokens: 600,
        cacheWriteInputTokens: 40,
      }),
    ).toEqual({
      prompt_tokens: 650,
      completion_tokens: 5,
      total_tokens: 655,
      prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 40 },
    });
  });

  it('Gemini: cachedContentTokenCount is part of promptTokenCount', () => {
    expect(
      geminiUsage({ promptTokenCount: 710, cachedContentTokenCount: 700, candidatesTokenCount: 5 }),
    ).toMatchObject({
      prompt_tokens: 710,
      completion_tokens: 5,
      prompt_tokens_details: { cached_tokens: 700 },
    });
  });

  it('OpenAI Responses: input_tokens includes the cache; reads and writes in input_tokens_details', () => {
    expect(
      usageFromResponses({
        input_tokens: 1000,
        input_tokens_details: { cached_tokens: 800, cache_write_tokens: 100 },
        output_tokens: 5,
      }),
    ).toMatchObject({
      prompt_tokens: 1000,
      prompt_tokens_details: { cached_tokens: 800, cache_write_tokens: 100 },
    });
  });
});

describe("cache usage in each client's wire", () => {
  const usage: Usage = {
    prompt_tokens: 990,
    completion_tokens: 5,
    total_tokens: 995,
    prompt_tokens_details: { cached_tokens: 900, cache_write_tokens: 80, cache_write_1h_tokens: 30 },
  };

  it('Messages: input_tokens is the uncached part, the writes split 5m/1h', () => {
    expect(messagesUsage(usage)).toMatchObject({
      input_tokens: 10,
      cache_read_input_tokens: 900,
      cache_creation_input_tokens: 80,
      cache_creation: { ephemeral_5m_input_tokens: 50, ephemeral_1h_input_tokens: 30 },
      output_tokens: 5,
    });
  });

  it("chat completions: OpenAI's members only (the gateway's 1-hour count removed)", () => {
    expect(chatClientUsage(usage)).toEqual({
      prompt_tokens: 990,
      completion_tokens: 5,
      total_tokens: 995,
      prompt_tokens_details: { cached_tokens: 900, cache_write_tokens: 80 },
    });
  });

  it('Responses: input_tokens is all input, reads and writes in input_tokens_details', () => {
    expect(responseUsage(usage)).toMatchObject({
      input_tokens: 990,
      input_tokens_details: { cached_tokens: 900, cache_write_tokens: 80 },
    });
  });
});
