import { answerMessages, isTruncated, requestMessages, textOf } from '../../src/console/web/request-content';
import { timeline, utcInstant, type Attempt } from '../../src/console/web/request-log';

const call = (durationMs: number): Attempt => ({
  kind: 'call',
  model: 'm',
  deployment: 'b/m',
  outcome: 'ok',
  status: 200,
  durationMs,
  error: null,
});

/** What the console's Requests pages compute before rendering (the rendering itself: console-requests.e2e). */
describe("the console's request log", () => {
  it('lays attempts end to end on the request timeline, each as long as it took', () => {
    expect(timeline([call(30), call(10)], 50)).toEqual([
      { start: 0, width: 0.6 },
      { start: 0.6, width: 0.2 },
    ]);
    // Attempts that add up past the latency (rounding) fill the line; a skipped candidate has no length.
    const skipped: Attempt = { kind: 'skipped', model: 'm', deployment: 'b/x', reason: 'circuit open' };
    expect(timeline([skipped, call(60), call(40)], 80)).toEqual([
      { start: 0, width: 0 },
      { start: 0, width: 0.6 },
      { start: 0.6, width: 0.4 },
    ]);
    expect(timeline([call(0)], 0)).toEqual([{ start: 0, width: 0 }]);
  });

  it('reads the date filters as UTC', () => {
    expect(utcInstant('2026-11-27T10:42')).toBe('2026-11-27T10:42:00.000Z');
    expect(utcInstant('2026-11-27T10:42:30')).toBe('2026-11-27T10:42:30.000Z');
    expect(utcInstant('')).toBe('');
    expect(utcInstant('not a date')).toBe('');
  });

  it('shows the messages of each API shape as text', () => {
    expect(
      requestMessages({
        model: 'x',
        messages: [
          { role: 'system', content: 'be brief' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: 'data:...' } },
            ],
          },
        ],
      }),
    ).toEqual([
      { role: 'system', text: 'be brief' },
      { role: 'user', text: 'look\n{"type":"image_url","image_url":{"url":"data:..."}}' },
    ]);
    // Anthropic: the system prompt apart, content blocks.
    expect(
      requestMessages({
        system: 'sys',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      }),
    ).toEqual([
      { role: 'system', text: 'sys' },
      { role: 'user', text: 'hi' },
    ]);
    // Responses and embeddings: instructions and input.
    expect(requestMessages({ instructions: 'ins', input: 'question' })).toEqual([
      { role: 'instructions', text: 'ins' },
      { role: 'input', text: 'question' },
    ]);
    expect(requestMessages({ input: ['a', 'b'] })).toEqual([
      { role: 'input', text: 'a' },
      { role: 'input', text: 'b' },
    ]);
    expect(requestMessages({ model: 'x' })).toBeNull();
    expect(requestMessages('text')).toBeNull();
  });

  it('shows an answer as its messages, tool calls included', () => {
    expect(answerMessages([{ role: 'assistant', content: 'echo: hi' }])).toEqual([
      { role: 'assistant', text: 'echo: hi' },
    ]);
    const calls = [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }];
    expect(answerMessages([{ role: 'assistant', content: null, tool_calls: calls }])).toEqual([
      { role: 'assistant', text: `tool calls: ${JSON.stringify(calls, null, 2)}` },
    ]);
    expect(answerMessages({ not: 'a list' })).toBeNull();
    expect(textOf({ a: 1 })).toBe('{\n  "a": 1\n}');
  });

  it('knows a side cut to size', () => {
    expect(isTruncated({ truncated: true, chars: 300_000, text: '{"model"' })).toBe(true);
    expect(isTruncated({ truncated: 'yes', text: '' })).toBe(false);
    expect(isTruncated(null)).toBe(false);
  });
});
