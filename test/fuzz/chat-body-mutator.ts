/**
 * A seeded mutation fuzzer for chat completion bodies: valid requests, then broken in the ways clients and
 * attackers break them (wrong types, huge and tiny sizes, deep nesting, odd unicode, duplicate and prototype
 * keys, truncated JSON, flipped bytes). The same seed gives the same bodies, so a failure can be replayed.
 */

/** mulberry32: small, fast, and good enough to drive a fuzzer reproducibly. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIELDS = ['model', 'messages', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'n', 'stop', 'stream', 'stream_options', 'thinking', 'tools', 'tool_choice', 'response_format', 'user', 'seed'];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__'];
const UNICODE = ['\u0000', '\u200b', '\u202e', '\ud800', '\udfff', '😀', '𝕏', 'é', 'e\u0301', '\ufeff', '\uffff', '\n', '"', '\\', '</script>', '%00', '${x}'];

export class ChatBodyMutator {
  private readonly random: () => number;

  constructor(seed: number) {
    this.random = seededRandom(seed);
  }

  /** The next body as the text to send (not always valid JSON, on purpose). */
  next(): string {
    const body = this.base();
    const mutations = 1 + this.int(3);
    for (let i = 0; i < mutations; i++) this.mutate(body);
    let text = this.serialize(body);
    const roll = this.random();
    if (roll < 0.06) text = text.slice(0, this.int(text.length)); // truncated
    else if (roll < 0.1) text = this.flipBytes(text);
    else if (roll < 0.14) text = this.duplicateKey(text);
    return text;
  }

  private base(): Record<string, unknown> {
    const body: Record<string, unknown> = { model: this.pick(['echo', 'echo', 'echo', 'nope', '']), messages: [{ role: 'user', content: this.text(40) }] };
    if (this.random() < 0.3) body.max_tokens = 1 + this.int(100);
    if (this.random() < 0.2) body.stream = true;
    if (this.random() < 0.2) body.temperature = this.random() * 2;
    return body;
  }

  private mutate(body: Record<string, unknown>): void {
    const choice = this.int(9);
    const field = this.pick(FIELDS);
    if (choice === 0) body[field] = this.value(0);
    else if (choice === 1) delete body[field];
    // An own key named __proto__ (plain assignment would set the prototype instead): JSON.stringify writes it.
    else if (choice === 2) Object.defineProperty(body, this.pick(PROTO_KEYS), { value: this.value(0), enumerable: true, writable: true, configurable: true });
    else if (choice === 3) body.messages = this.messages();
    else if (choice === 4) body[field] = this.nested(1 + this.int(200));
    else if (choice === 5) body[this.text(12)] = this.value(0);
    else if (choice === 6) body.messages = [{ role: this.pick(['user', 'system', 'assistant', 'tool', 'robot', '']), content: this.value(0) }];
    else if (choice === 7) body[field] = this.pick([1e308, -0, 2 ** 53 + 1, -1, 0, 0.5, 1e-300, Number.MAX_SAFE_INTEGER]);
    else body.messages = [{ role: 'user', content: 'x'.repeat(this.int(200_000)) }]; // one long run: linear tokenizing
  }

  private messages(): unknown {
    const count = this.int(6);
    return Array.from({ length: count }, () => {
      const message: Record<string, unknown> = { role: this.pick(['user', 'system', 'developer', 'assistant', 'tool']), content: this.value(0) };
      if (this.random() < 0.3) message.tool_call_id = this.value(0);
      if (this.random() < 0.2) message.tool_calls = this.value(0);
      if (this.random() < 0.2) message.content = [{ type: this.pick(['text', 'image_url', 'input_audio', '']), text: this.value(1), image_url: this.value(1) }];
      return message;
    });
  }

  private value(depth: number): unknown {
    const kind = this.int(depth > 3 ? 6 : 9);
    switch (kind) {
      case 0:
        return null;
      case 1:
        return this.random() < 0.5;
      case 2:
        return this.pick([0, -1, 1, 3.14, 1e21, -1e21, 4096, 2 ** 31]);
      case 3:
        return this.text(30);
      case 4:
        return '';
      case 5:
        // Large, but rarely: a large text that passes validation is echoed back by the stand-in word by word.
        return this.random() < 0.3 ? this.text(2000 + this.int(30_000)) : this.text(300);
      case 6:
        return Array.from({ length: this.int(5) }, () => this.value(depth + 1));
      case 7:
        return Object.fromEntries(Array.from({ length: this.int(5) }, () => [this.text(8), this.value(depth + 1)]));
      default:
        return { type: this.pick(['enabled', 'disabled', 'text', 'json_object']), budget_tokens: this.value(depth + 1) };
    }
  }

  private nested(depth: number): unknown {
    let value: unknown = this.value(3);
    for (let i = 0; i < depth; i++) value = this.random() < 0.5 ? [value] : { a: value };
    return value;
  }

  private text(max: number): string {
    const length = this.int(max + 1);
    let out = '';
    for (let i = 0; i < length; i++) out += this.random() < 0.15 ? this.pick(UNICODE) : String.fromCharCode(32 + this.int(95));
    return out;
  }

  /** JSON text of the body, own `__proto__` keys included. */
  private serialize(body: Record<string, unknown>): string {
    return JSON.stringify(body);
  }

  private duplicateKey(text: string): string {
    if (!text.startsWith('{') || text.length < 2) return text;
    return `{"model":${JSON.stringify(this.pick(['echo', 123, null]))},"messages":${JSON.stringify(this.value(1))},${text.slice(1)}`;
  }

  private flipBytes(text: string): string {
    const chars = [...text];
    for (let i = 0; i < 1 + this.int(4); i++) chars[this.int(chars.length)] = String.fromCharCode(this.int(256));
    return chars.join('');
  }

  private int(below: number): number {
    return Math.floor(this.random() * below);
  }

  private pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
}
