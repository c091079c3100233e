/**
 * A seeded mutation fuzzer for chat completion bodies (POST /v1/chat/completions): valid requests, then broken
 * as body-mutator.ts describes. The other client APIs' fuzzers are in api-body-mutators.ts.
 */
import { BodyMutator, NOT_OBJECTS, seededRandom } from './body-mutator';

export { seededRandom };

const FIELDS = [
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'n',
  'stop',
  'stream',
  'stream_options',
  'thinking',
  'tools',
  'tool_choice',
  'response_format',
  'user',
  'seed',
];

export class ChatBodyMutator extends BodyMutator {
  protected base(): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: this.model(['echo', 'echo', 'echo', 'nope', '']),
      messages: [{ role: 'user', content: this.text(40) }],
    };
    if (this.random() < 0.3) body.max_tokens = 1 + this.int(100);
    if (this.random() < 0.2) body.stream = true;
    if (this.random() < 0.2) body.temperature = this.random() * 2;
    return body;
  }

  protected mutate(body: Record<string, unknown>): void {
    const choice = this.int(12);
    const field = this.pick(FIELDS);
    if (choice === 0) body[field] = this.value(0);
    else if (choice === 1) delete body[field];
    else if (choice === 2) this.protoKey(body);
    else if (choice === 3) body.messages = this.messages();
    else if (choice === 4) body[field] = this.nested(1 + this.int(200));
    else if (choice === 5) body[this.text(12)] = this.value(0);
    else if (choice === 6)
      body.messages = [
        { role: this.pick(['user', 'system', 'assistant', 'tool', 'robot', '']), content: this.value(0) },
      ];
    else if (choice === 7)
      body[field] = this.pick([1e308, -0, 2 ** 53 + 1, -1, 0, 0.5, 1e-300, Number.MAX_SAFE_INTEGER]);
    else if (choice === 8)
      body.messages = [{ role: 'user', content: 'x'.repeat(this.int(200_000)) }]; // one long run: linear tokenizing
    else if (choice === 9)
      body.messages = this.withStrayItem(Array.isArray(body.messages) ? body.messages : []); // where a message belongs, no message
    else if (choice === 10)
      // A tool call of the wrong shape in the history: every translation reads its id, name and arguments.
      body.messages = [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, tool_calls: [this.toolCall()] },
        { role: 'tool', tool_call_id: 'c', content: 'done' },
      ];
    else body.messages = [{ role: 'user', content: [this.part()] }]; // a content part of the wrong shape
  }

  /** A tool call with one of its fields wrong (or missing, or the call itself not an object). */
  private toolCall(): unknown {
    const call: Record<string, unknown> = {
      id: 'c',
      type: 'function',
      function: { name: 'f', arguments: '{}' },
    };
    const where = this.pick(['call', 'id', 'type', 'function', 'name', 'arguments']);
    if (where === 'call') return this.value(0);
    if (where === 'name' || where === 'arguments')
      (call.function as Record<string, unknown>)[where] = this.value(0);
    else call[where] = this.value(0);
    return call;
  }

  /** A content part of a known type whose own field is wrong (or missing). */
  private part(): Record<string, unknown> {
    const type = this.pick(['text', 'image_url', 'input_audio', 'file', 'refusal']);
    const part: Record<string, unknown> = { type };
    if (this.random() < 0.7) part[this.pick([type, 'text', 'url', 'data'])] = this.value(0);
    return part;
  }

  protected duplicatePrefix(): Record<string, unknown> {
    return { model: this.pick(['echo', 123, null]), messages: this.value(1) };
  }

  private messages(): unknown {
    const count = this.int(6);
    return Array.from({ length: count }, () => {
      const message: Record<string, unknown> = {
        role: this.pick(['user', 'system', 'developer', 'assistant', 'tool']),
        content: this.value(0),
      };
      if (this.random() < 0.3) message.tool_call_id = this.value(0);
      if (this.random() < 0.2) message.tool_calls = this.value(0);
      if (this.random() < 0.2)
        message.content = [
          {
            type: this.pick(['text', 'image_url', 'input_audio', '']),
            text: this.value(1),
            image_url: this.value(1),
          },
        ];
      return message;
    });
  }

  private withStrayItem(messages: unknown[]): unknown[] {
    const out = [...messages];
    out.splice(this.int(out.length + 1), 0, this.pick(NOT_OBJECTS));
    return out;
  }
}
