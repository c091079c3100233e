import { Redactor } from '../../src/request-log/redaction/redactor';

/** redactJson: every string of a request or response body, in each vendor's shape; keys and the input untouched. */
const redactor = new Redactor({ patterns: [{ name: 'employee_id', pattern: 'EMP-\\d{6}' }] });

/** Freezes a value all the way down, so a write to the input throws. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}

describe('redactJson', () => {
  it('an OpenAI chat body: messages, content parts, tool-call arguments that are JSON strings', () => {
    const body = deepFreeze({
      model: 'gpt-6-luna',
      max_tokens: 1024,
      messages: [
        { role: 'system', content: 'You help EMP-004711 with billing.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'My card is 4111 1111 1111 1111, mail me at dana@example.org' },
            { type: 'image_url', image_url: { url: 'https://example.com/receipt.png' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: {
                name: 'send_email',
                arguments:
                  '{"to":"dana@example.org","body":"Hi,\\ndana@example.org asked: call +1 (415) 555-0134"}',
              },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"status":"sent","id":"msg_123"}' },
      ],
    });
    const before = JSON.stringify(body);
    const out = redactor.redactJson(body) as typeof body;
    expect(JSON.stringify(body)).toBe(before);
    expect(out).toEqual({
      model: 'gpt-6-luna',
      max_tokens: 1024,
      messages: [
        { role: 'system', content: 'You help [employee_id] with billing.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'My card is [card], mail me at [email]' },
            { type: 'image_url', image_url: { url: 'https://example.com/receipt.png' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              // Parsed, redacted inside, written back: still JSON, and the \n escape is not taken for text.
              function: {
                name: 'send_email',
                arguments: '{"to":"[email]","body":"Hi,\\n[email] asked: call [phone]"}',
              },
            },
          ],
        },
        // Nothing found: the string as the client sent it.
        { role: 'tool', tool_call_id: 'call_1', content: '{"status":"sent","id":"msg_123"}' },
      ],
    });
    expect(JSON.parse(out.messages[2].tool_calls![0].function.arguments)).toEqual({
      to: '[email]',
      body: 'Hi,\n[email] asked: call [phone]',
    });
  });

  it('an Anthropic Messages body: text, tool_use input objects, tool_result blocks', () => {
    const body = deepFreeze({
      model: 'claude-sonnet-5-5',
      system: [{ type: 'text', text: 'Support agent. Escalate to ops@example.com.' }],
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Looking up the account.' },
            {
              type: 'tool_use',
              id: 'toolu_1',
              name: 'lookup',
              input: { iban: 'DE89 3704 0044 0532 0130 00', note: ['call 030 1234567'] },
            },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{ type: 'text', text: 'owner: maria@example.de' }],
            },
          ],
        },
      ],
    });
    expect(redactor.redactJson(body)).toEqual({
      model: 'claude-sonnet-5-5',
      system: [{ type: 'text', text: 'Support agent. Escalate to [email].' }],
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Looking up the account.' },
            {
              type: 'tool_use',
              id: 'toolu_1',
              name: 'lookup',
              input: { iban: '[iban]', note: ['call [phone]'] },
            },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{ type: 'text', text: 'owner: [email]' }],
            },
          ],
        },
      ],
    });
  });

  it('Responses items: input_text, function_call arguments, output_text', () => {
    const items = deepFreeze([
      {
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: 'key sk-proj-abcdefghijklmnopqrstuvwx' }],
      },
      { type: 'function_call', call_id: 'fc_1', name: 'pay', arguments: '{"card":"5555-5555-5555-4444"}' },
      { type: 'function_call_output', call_id: 'fc_1', output: '{"ok":true}' },
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Paid; receipt to a@b.io' }],
      },
    ]);
    expect(redactor.redactJson(items)).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'key [api_key]' }] },
      { type: 'function_call', call_id: 'fc_1', name: 'pay', arguments: '{"card":"[card]"}' },
      { type: 'function_call_output', call_id: 'fc_1', output: '{"ok":true}' },
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Paid; receipt to [email]' }],
      },
    ]);
  });

  it('replaces a string under a secret-named key whole, as the [secret] detector does in text', () => {
    const args = '{"user":"deploy","password":"hunter2hunter2","api_key":"0123456789abcdef","pin":"1234"}';
    expect(
      redactor.redactJson({ arguments: args, client_secret: 'abcdefgh12', db_password: 'short' }),
    ).toEqual({
      arguments: '{"user":"deploy","password":"[secret]","api_key":"[secret]","pin":"1234"}',
      client_secret: '[secret]',
      db_password: 'short',
    });
  });

  it('leaves the token of an OpenAI logprobs entry alone (it is a piece of the answer)', () => {
    const logprobs = {
      content: [{ token: ' understanding', logprob: -0.01, bytes: [32, 117], top_logprobs: [] }],
    };
    expect(redactor.redactJson(logprobs)).toEqual(logprobs);
  });

  it('leaves keys alone, even when they look like something it redacts', () => {
    const out = redactor.redactJson({ 'dana@example.org': 'dana@example.org', 'EMP-004711': 1 });
    expect(out).toEqual({ 'dana@example.org': '[email]', 'EMP-004711': 1 });
  });

  it('redacts an integer by its digits, and leaves other numbers, booleans and null', () => {
    expect(
      redactor.redactJson({ card: 4111111111111111, n: 1764268461001, f: 0.5, b: true, z: null }),
    ).toEqual({
      card: '[card]',
      n: 1764268461001,
      f: 0.5,
      b: true,
      z: null,
    });
  });

  it('returns a copy: changing the output leaves the input as it was', () => {
    const input = { messages: [{ role: 'user', content: 'hello' }] };
    const out = redactor.redactJson(input) as typeof input;
    out.messages[0].content = 'changed';
    out.messages.push({ role: 'user', content: 'more' });
    expect(input).toEqual({ messages: [{ role: 'user', content: 'hello' }] });
  });

  it('keeps a __proto__ key a key (it does not become the prototype)', () => {
    const input = JSON.parse('{"__proto__": {"polluted": "a@example.com"}}') as object;
    const out = redactor.redactJson(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":"[email]"}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('replaces JSON nested past its depth limit by [too_deep] instead of overflowing the stack', () => {
    let deep: unknown = 'a@example.com';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const text = JSON.stringify(redactor.redactJson(deep));
    expect(text).toContain('"[too_deep]"');
    expect(text).not.toContain('example.com');
  });

  it('treats a string that only looks like JSON as text', () => {
    expect(redactor.redactJson('[email me at a@example.com')).toBe('[email me at [email]');
    expect(redactor.redactJson('{not json} a@example.com')).toBe('{not json} [email]');
  });
});
