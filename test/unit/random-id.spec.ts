import { buildConfig } from '../support/config';
import { messageId } from '../../src/endpoints/messages/chat-to-messages';
import { AnthropicAdapter } from '../../src/providers/anthropic/anthropic.adapter';
import type { AnthropicBackendConfig } from '../../src/providers/anthropic/anthropic.config';
import { GeminiAdapter } from '../../src/providers/gemini/gemini.adapter';
import { GeminiStreamMapper } from '../../src/providers/gemini/gemini.stream';
import { GatewayException } from '../../src/core/errors/gateway.exception';
import { OpenAIAdapter } from '../../src/providers/openai/openai.adapter';
import { randomId } from '../../src/core/random-id';

const config = buildConfig(
  {
    admin: { apiKey: 'k' },
    backends: { b: { type: 'openai', baseUrl: 'http://x/v1', apiKey: 'sk-up' } },
  },
  {},
);
const backend = config.backends.b;
const TIMES = 1000;

/** `make` called TIMES times in a row (well within one millisecond apart): every id of the vendor's form, none twice. */
function expectRandom(make: () => string, form: RegExp): void {
  const ids = Array.from({ length: TIMES }, make);
  for (const id of ids) expect(id).toMatch(form);
  expect(new Set(ids).size).toBe(TIMES);
}

describe('ids the gateway makes up', () => {
  it("are random in the vendors' alphabet and length, never a counter", () => {
    expectRandom(() => randomId('chatcmpl-', 29), /^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(randomId('call_', 24)).toMatch(/^call_[A-Za-z0-9]{24}$/);
  });

  // Where a backend's answer has no id, the one the gateway makes must be unique across restarts and replicas too
  // (it was the time in ms, or a counter per answer for Gemini's tool calls: call_0_0 in every turn).
  it('an OpenAI-compatible answer without an id', () => {
    const adapter = new OpenAIAdapter('b', backend);
    const reply = {
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    };
    expectRandom(() => adapter.parseResponse(reply).id, /^chatcmpl-[A-Za-z0-9]{29}$/);
  });

  it('a Gemini answer without a responseId, its calls without ids, and a Gemini stream', () => {
    const adapter = new GeminiAdapter('b', backend);
    const reply = {
      candidates: [
        {
          index: 0,
          content: {
            role: 'model',
            parts: [{ functionCall: { name: 'f', args: {} } }, { functionCall: { name: 'g', args: {} } }],
          },
          finishReason: 'STOP',
        },
      ],
    };
    expectRandom(() => adapter.parseResponse(reply).id, /^chatcmpl-[A-Za-z0-9]{29}$/);
    expectRandom(() => {
      const calls = (adapter.parseResponse(reply).choices[0].message.tool_calls ?? []) as Array<{
        id: string;
      }>;
      expect(calls).toHaveLength(2);
      expect(new Set(calls.map((call) => call.id)).size).toBe(2);
      return calls[0].id;
    }, /^call_[A-Za-z0-9]{24}$/);
    expectRandom(() => {
      const mapper = new GeminiStreamMapper(() => new GatewayException('upstream_error', 'x'));
      return mapper.map({ data: JSON.stringify(reply) }).chunks[0].id;
    }, /^chatcmpl-[A-Za-z0-9]{29}$/);
  });

  it('an Anthropic answer without an id, and a translated Message whose upstream had none', () => {
    const adapter = new AnthropicAdapter('b', backend as AnthropicBackendConfig);
    const reply = {
      content: [{ type: 'text', text: 'hi' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 1, output_tokens: 1 },
    };
    expectRandom(() => adapter.parseResponse(reply).id, /^msg_[A-Za-z0-9]{24}$/);
    expectRandom(() => messageId(undefined), /^msg_[A-Za-z0-9]{24}$/);
    expect(messageId('chatcmpl-abc')).toBe('msg_chatcmpl-abc');
  });
});
