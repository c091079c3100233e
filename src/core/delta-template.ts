/**
 * The ordinary content delta of an OpenAI-compatible stream, read without `JSON.parse`.
 *
 * Nearly every event of a stream is the chunk before it with other content: the same id, model, index and
 * nulls around a few new characters (and, from OpenAI, a new `obfuscation` padding string). Parsing every one
 * was the largest cost of a relayed chunk (~0.7 µs of ~2 µs, docs/performance.md). So the stream mapper parses a
 * content delta once and keeps its text as a template: the fixed text around the string values that change.
 * A later event that is that fixed text with other string values is the same chunk with other values, and is
 * read by comparing the fixed text and slicing the values out (~0.1 µs).
 *
 * Why a match is exactly what `JSON.parse` would have read:
 * - the template comes from a chunk that was parsed and checked: one choice, no finish reason, no usage (null or
 *   absent), no error, a delta of a string `content` (and a `role`, or members that are null), written on one
 *   line; its fixed text has no backslash, so each key in it is written literally and `content` is the only one;
 * - a value runs to its first unescaped quote, and the fixed text must follow it exactly, to the event's end;
 * - a value with a raw control character is not a match (invalid JSON); a value with escapes is decoded by
 *   `JSON.parse` of that string alone, so an invalid escape is not a match either.
 * Everything else is parsed as before, and a parsed content delta becomes the new template.
 */

/** What the relay needs of a matched content delta; the encoder rebuilds the event from `values`. */
export interface ContentDelta {
  template: DeltaTemplate;
  /** The variable string values as written in the event (escapes kept), in `template.parts` order. */
  values: string[];
  /** The delta's content, decoded: what the client was sent, for the estimate if the stream is cut. */
  text: string;
}

/** The string members whose values change from one content delta to the next. */
const CONTENT_KEY = '"content":"';
const OBFUSCATION_KEY = '"obfuscation":"';
const BACKSLASH = 0x5c;

export class DeltaTemplate {
  private constructor(
    /** The fixed text: the event is parts[0] + values[0] + parts[1] + ... + parts[last]. */
    readonly parts: readonly string[],
    /** Which value is the delta's content (the other, if any, is the obfuscation padding). */
    private readonly contentIndex: number,
    /** The upstream's model name, as parsed from the template's chunk. */
    readonly model: unknown,
    /** The chunk carries `"usage":null` (OpenAI's shape once usage is requested) rather than no usage member. */
    readonly usageNull: boolean,
  ) {}

  /** A template from a parsed chunk and its one-line text, or undefined when the chunk is not a plain content delta. */
  static learn(chunk: Record<string, unknown>, text: string): DeltaTemplate | undefined {
    if (!isPlainContentDelta(chunk)) return undefined;
    const slots: Array<{ start: number; end: number; content: boolean }> = [];
    for (const [key, content] of [
      [CONTENT_KEY, true],
      [OBFUSCATION_KEY, false],
    ] as const) {
      const at = text.indexOf(key);
      if (at < 0) {
        if (content) return undefined;
        continue;
      }
      const name = key.slice(0, -2); // `"content"`: the key must appear once, whatever its value
      if (text.indexOf(name) !== at || text.includes(name, at + 1)) return undefined;
      const start = at + key.length;
      const end = closingQuote(text, start);
      if (end < 0) return undefined;
      slots.push({ start, end, content });
    }
    slots.sort((a, b) => a.start - b.start);
    const parts: string[] = [];
    let from = 0;
    for (const slot of slots) {
      parts.push(text.slice(from, slot.start));
      from = slot.end;
    }
    parts.push(text.slice(from));
    if (parts.some((part) => part.includes('\\'))) return undefined;
    const template = new DeltaTemplate(
      parts,
      slots.findIndex((slot) => slot.content),
      chunk.model,
      chunk.usage === null,
    );
    // The content slot must read back as the parsed content (a check that this is the delta's member).
    const read = template.read(text);
    return read?.text === (chunk.choices as Array<{ delta: { content: string } }>)[0].delta.content
      ? template
      : undefined;
  }

  /** The event read against this template, or undefined when it is not the same chunk with other values. */
  read(text: string): ContentDelta | undefined {
    const { parts } = this;
    // Fixed text is compared as slices (`===` compares memory) rather than with startsWith: in V8 this is ~5x
    // faster for a prefix of ~150 characters, the largest cost of a read.
    let at = parts[0].length;
    if (text.slice(0, at) !== parts[0]) return undefined;
    const values: string[] = [];
    let content = '';
    for (let i = 1; i < parts.length; i++) {
      const end = closingQuote(text, at);
      if (end < 0 || text.slice(end, end + parts[i].length) !== parts[i]) return undefined;
      const written = text.slice(at, end);
      const value = stringValue(written);
      if (value === undefined) return undefined;
      values.push(written);
      if (i - 1 === this.contentIndex) content = value;
      at = end + parts[i].length;
    }
    return at === text.length ? { template: this, values, text: content } : undefined;
  }
}

/** One choice, not finished, a string `content` and nothing else the relay acts on; no usage, no error. */
function isPlainContentDelta(chunk: Record<string, unknown>): boolean {
  if ('error' in chunk || (chunk.usage !== undefined && chunk.usage !== null)) return false;
  const choices = chunk.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return false;
  const choice = choices[0] as Record<string, unknown> | null;
  if (
    typeof choice !== 'object' ||
    choice === null ||
    (choice.finish_reason !== undefined && choice.finish_reason !== null)
  )
    return false;
  const delta = choice.delta as Record<string, unknown> | null;
  if (typeof delta !== 'object' || delta === null || typeof delta.content !== 'string') return false;
  for (const key of Object.keys(delta)) {
    if (key !== 'content' && !(key === 'role' && typeof delta.role === 'string') && delta[key] !== null)
      return false;
  }
  return true;
}

/** The index of the first unescaped quote at or after `from`, or -1. */
function closingQuote(text: string, from: number): number {
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    for (let k = quote - 1; k >= from && text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/**
 * The string a JSON string's inner text stands for, or undefined when it is not valid JSON: a raw control
 * character, or an invalid escape. A loop rather than a regular expression: values are a few characters long.
 */
function stringValue(written: string): string | undefined {
  let escaped = false;
  for (let i = 0; i < written.length; i++) {
    const code = written.charCodeAt(i);
    if (code < 0x20) return undefined;
    if (code === BACKSLASH) escaped = true;
  }
  if (!escaped) return written;
  try {
    return JSON.parse(`"${written}"`) as string;
  } catch {
    return undefined;
  }
}
