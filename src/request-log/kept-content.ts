import type { Redactor } from './redaction/redactor';
import type { RequestLogContent } from './request-log-entry';

/** What was sent and answered, as the request has it: redacted and cut to size only on its way to the store. */
export interface UnredactedContent {
  request: unknown;
  response: unknown;
}

/**
 * The most of each side (request, answer) the log keeps, in UTF-16 code units of its JSON: a 15 MB prompt is kept
 * as its first 256 K characters, as text. Redaction walks every character it keeps with each detector; past this
 * size it would hold the event loop for tens of milliseconds per entry.
 */
export const MAX_KEPT_CHARS = 256 * 1024;

/** A side too big to keep whole: its JSON's beginning, redacted as text. */
export interface TruncatedContent {
  truncated: true;
  /** The length of its whole JSON text. */
  chars: number;
  text: string;
}

/** The content as the store keeps it: each side redacted, a side over MAX_KEPT_CHARS cut to its beginning. */
export function keptContent(content: UnredactedContent, redactor: Redactor): RequestLogContent {
  return { request: keptSide(content.request, redactor), response: keptSide(content.response, redactor) };
}

function keptSide(value: unknown, redactor: Redactor): unknown {
  if (value === undefined || value === null) return null;
  const json = JSON.stringify(value);
  if (json.length <= MAX_KEPT_CHARS) return redactor.redactJson(value);
  const truncated: TruncatedContent = {
    truncated: true,
    chars: json.length,
    text: redactor.redactText(json.slice(0, MAX_KEPT_CHARS)),
  };
  return truncated;
}
