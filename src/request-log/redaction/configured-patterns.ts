import type { RE2JS } from 're2js';
import { markerOf, type Detector } from './detector';

/** `logging.requests.redaction.patterns[]`: what an operator adds to the built-in detectors. */
export interface ConfiguredPattern {
  /** Names the marker: `[<name>]`. */
  name: string;
  /** RE2 syntax (no backreferences, no lookaround); flags inline, e.g. `(?i)`. */
  pattern: string;
}

/**
 * Configured patterns run on RE2JS, a pure-JS port of RE2: matching takes time linear in the text whatever the
 * pattern, so a pattern written in haste cannot stall the log writer on a large prompt (a backtracking engine can
 * take exponential time on `(a+)+b`). The native `re2` binding would be faster but downloads or compiles a binary
 * at install. RE2 refuses what it cannot run in linear time (backreferences, lookahead, lookbehind).
 */
function compile(pattern: string): RE2JS {
  // Loaded on the first configured pattern (synchronously: the config loader checks patterns at boot), so a gateway
  // without any does not carry it (test/unit/boot-footprint.spec.ts).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { RE2JS: engine } = require('re2js') as typeof import('re2js');
  return engine.compile(pattern);
}

/** Why RE2 cannot use the pattern, in one line for the config error; undefined when it can. */
export function configuredPatternProblem(pattern: string): string | undefined {
  let compiled: RE2JS;
  try {
    compiled = compile(pattern);
  } catch (error) {
    return `RE2 cannot compile it (${(error as Error).message}; RE2 has no backreferences or lookaround)`;
  }
  // A pattern that matches the empty string would put a marker between every two characters.
  if (compiled.testExact('')) return 'matches the empty string';
  return undefined;
}

/** The detector of one configured pattern (the config loader has checked it with configuredPatternProblem). */
export function configuredPatternDetector({ name, pattern }: ConfiguredPattern): Detector {
  const compiled = compile(pattern);
  const marker = markerOf(name);
  return {
    kind: name,
    // A pattern that can still match empty somewhere (`\b`) keeps those empty matches empty.
    redact: (text) => compiled.matcher(text).replaceAll((match: string) => (match === '' ? '' : marker)),
  };
}
