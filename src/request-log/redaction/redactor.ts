import { BUILT_IN_DETECTORS } from './built-in-detectors';
import { configuredPatternDetector, type ConfiguredPattern } from './configured-patterns';
import { markerOf, type Detector } from './detector';
import { isSecretValueOf } from './secret-detectors';

/** What a Redactor is built from: `logging.requests.redaction` of the config. */
export interface RedactionPolicy {
  patterns: readonly ConfiguredPattern[];
}

/** JSON nested deeper than this is replaced whole by `[too_deep]` rather than walked (the stack has an end). */
const MAX_DEPTH = 128;

/**
 * The one redaction policy of the request log: its store, the OpenTelemetry content attributes and any exporter
 * all redact through the same Redactor, built once from the config. Each match becomes a marker naming its kind
 * (`[email]`, `[card]`, `[api_key]`, a configured pattern's `[<name>]`).
 *
 * Configured patterns run before the built-in detectors: an operator's pattern for, say, employee ids names them
 * before the phone detector could take their digits.
 */
export class Redactor {
  private readonly detectors: readonly Detector[];

  constructor(policy: RedactionPolicy = { patterns: [] }) {
    this.detectors = [...policy.patterns.map(configuredPatternDetector), ...BUILT_IN_DETECTORS];
  }

  /** The text with everything the policy detects replaced by its marker. */
  redactText(text: string): string {
    let out = text;
    for (const detector of this.detectors) out = detector.redact(out);
    return out;
  }

  /**
   * A copy of a JSON value (a request or response body: chat messages, content parts, Anthropic blocks, Responses
   * items) with every string in it redacted; keys are kept as they are, and the input is never changed. A string
   * under a secret-named key (`password`, `client_secret`, `api_key`: the rule of the `[secret]` detector) becomes
   * `[secret]` whole. A string that is itself JSON (tool-call `arguments`) is parsed, redacted inside and written
   * back with JSON.stringify (unchanged when nothing in it was found). An integer is redacted as its digits (a card
   * number sent as a number becomes the string `[card]`).
   */
  redactJson(value: unknown): unknown {
    return this.walk(value, 0);
  }

  private walk(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.redactString(value, depth);
    if (typeof value === 'number') return this.redactNumber(value);
    if (value === null || typeof value !== 'object') return value;
    if (depth >= MAX_DEPTH) return markerOf('too_deep');
    if (Array.isArray(value)) return value.map((item) => this.walk(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const redacted =
        typeof item === 'string' && isSecretValueOf(key, item)
          ? markerOf('secret')
          : this.walk(item, depth + 1);
      // A `__proto__` key (JSON.parse makes it an own property) must stay a property, not become the prototype.
      if (key === '__proto__')
        Object.defineProperty(out, key, {
          value: redacted,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[key] = redacted;
    }
    return out;
  }

  private redactString(text: string, depth: number): string {
    const embedded = parseEmbeddedJson(text);
    if (embedded === undefined) return this.redactText(text);
    const redacted = JSON.stringify(this.walk(embedded, depth + 1));
    // Nothing found: the original text, its spacing and key order as the client wrote them.
    return redacted === JSON.stringify(embedded) ? text : redacted;
  }

  private redactNumber(value: number): number | string {
    if (!Number.isSafeInteger(value) || Math.abs(value) < 1e7) return value;
    const digits = String(value);
    const redacted = this.redactText(digits);
    return redacted === digits ? value : redacted;
  }
}

/** The object or array a string holds as JSON (tool-call arguments), or undefined when it holds none. */
function parseEmbeddedJson(text: string): object | undefined {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' ? parsed : undefined;
  } catch {
    return undefined;
  }
}
