/**
 * The machinery of the seeded mutation fuzzers (one per client API: chat-body-mutator.ts, api-body-mutators.ts):
 * a valid request of the API, broken in the ways clients and attackers break them (wrong types, huge and tiny
 * sizes, deep nesting, odd unicode, duplicate and prototype keys, truncated JSON, flipped bytes). The same seed
 * gives the same bodies, so a failure can be replayed.
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

export const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '__defineGetter__',
];
const UNICODE = [
  '\u0000',
  '\u200b',
  '\u202e',
  '\ud800',
  '\udfff',
  '😀',
  '𝕏',
  'é',
  'e\u0301',
  '\ufeff',
  '\uffff',
  '\n',
  '"',
  '\\',
  '</script>',
  '%00',
  '${x}',
];

/** Values that stand where an object (a message, an item, a block) belongs: `{"messages": [[]]}` was a 500. */
export const NOT_OBJECTS: unknown[] = [[], [[]], [{}], null, 'x', '', 0, 1.5, true, false];

export abstract class BodyMutator {
  protected readonly random: () => number;

  /**
   * @param routedTo the configured models a base body names (one picked per body, beside an unknown and an empty
   * name), so one run's bodies are split across backends of every family instead of multiplied by them; each
   * API's mutator has its own default.
   */
  constructor(
    seed: number,
    protected readonly routedTo?: readonly string[],
  ) {
    this.random = seededRandom(seed);
  }

  /** A base body's model: one of `routedTo` (else of `fallback`), or now and then an unknown or empty name. */
  protected model(fallback: readonly string[]): string {
    return this.pick(this.routedTo ? [...this.routedTo, 'nope', ''] : [...fallback]);
  }

  /** The next body as the text to send (not always valid JSON, on purpose). */
  next(): string {
    const body = this.base();
    const mutations = 1 + this.int(3);
    for (let i = 0; i < mutations; i++) this.mutate(body);
    let text = JSON.stringify(body); // own `__proto__` keys included
    const roll = this.random();
    if (roll < 0.06)
      text = text.slice(0, this.int(text.length)); // truncated
    else if (roll < 0.1) text = this.flipBytes(text);
    else if (roll < 0.14) text = this.duplicateKey(text);
    return text;
  }

  /** A valid request of the API. */
  protected abstract base(): Record<string, unknown>;

  /** One change to it. */
  protected abstract mutate(body: Record<string, unknown>): void;

  /** The members a body with a duplicated key starts with (JSON.parse keeps the last of each). */
  protected abstract duplicatePrefix(): Record<string, unknown>;

  /** An own key named like a prototype member (plain assignment would set the prototype instead). */
  protected protoKey(target: Record<string, unknown>): void {
    Object.defineProperty(target, this.pick(PROTO_KEYS), {
      value: this.value(0),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }

  protected value(depth: number): unknown {
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
        return Object.fromEntries(
          Array.from({ length: this.int(5) }, () => [this.text(8), this.value(depth + 1)]),
        );
      default:
        return {
          type: this.pick(['enabled', 'disabled', 'text', 'json_object', 'auto', 'function']),
          budget_tokens: this.value(depth + 1),
        };
    }
  }

  protected nested(depth: number): unknown {
    let value: unknown = this.value(3);
    for (let i = 0; i < depth; i++) value = this.random() < 0.5 ? [value] : { a: value };
    return value;
  }

  protected text(max: number): string {
    const length = this.int(max + 1);
    let out = '';
    for (let i = 0; i < length; i++)
      out += this.random() < 0.15 ? this.pick(UNICODE) : String.fromCharCode(32 + this.int(95));
    return out;
  }

  protected int(below: number): number {
    return Math.floor(this.random() * below);
  }

  protected pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** One of `choices`, or (one time in `odds`) a random value of any type. */
  protected maybe<T>(choices: readonly T[], odds = 4): unknown {
    return this.int(odds) === 0 ? this.value(1) : this.pick(choices);
  }

  private duplicateKey(text: string): string {
    if (!text.startsWith('{') || text.length < 2) return text;
    const prefix = JSON.stringify(this.duplicatePrefix());
    return `${prefix.slice(0, -1)},${text.slice(1)}`;
  }

  private flipBytes(text: string): string {
    const chars = [...text];
    for (let i = 0; i < 1 + this.int(4); i++)
      chars[this.int(chars.length)] = String.fromCharCode(this.int(256));
    return chars.join('');
  }
}
