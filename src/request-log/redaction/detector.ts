/** One kind of thing the redaction finds in text, e.g. email addresses. */
export interface Detector {
  /** What it finds; its matches become the marker `[<kind>]`. */
  readonly kind: string;
  /** The text with every match this detector accepts replaced (the text itself when there is none). */
  redact(text: string): string;
}

/** The marker a match of `kind` is replaced by. */
export function markerOf(kind: string): string {
  return `[${kind}]`;
}

export interface RegexDetectorSpec {
  kind: string;
  /** Global. Built-in patterns are plain JS regexes kept linear (see built-in-detectors.ts on how). */
  pattern: RegExp;
  /** A cheap test that the text may hold a match at all (e.g. it has an `@`), to skip the scan. */
  mayContain?: (text: string) => boolean;
  /**
   * What a match becomes: the marker (the default), some of the match kept around the marker, or the match itself
   * when a check says it is not one (a card number that fails the Luhn check).
   */
  replace?: (match: string, groups: ReadonlyArray<string | undefined>) => string;
}

export function regexDetector(spec: RegexDetectorSpec): Detector {
  if (!spec.pattern.global) throw new Error(`the ${spec.kind} detector's pattern must be global`);
  const marker = markerOf(spec.kind);
  const replace = spec.replace;
  return {
    kind: spec.kind,
    redact(text) {
      if (spec.mayContain && !spec.mayContain(text)) return text;
      if (!replace) return text.replace(spec.pattern, marker);
      return text.replace(spec.pattern, (match: string, ...rest: unknown[]) => {
        // String.replace passes the groups, then the offset (a number), the whole text and (with named groups)
        // an object: the groups are the arguments before the offset.
        const offsetAt = rest.findIndex((arg) => typeof arg === 'number');
        return replace(match, rest.slice(0, offsetAt) as Array<string | undefined>);
      });
    },
  };
}
