import type { Request } from 'express';

/** The client's JSON body: its bytes (UTF-8) and what `JSON.parse` made of them, before validation. */
export interface JsonSource {
  bytes: Buffer;
  parsed: unknown;
}

/**
 * The body as the client sent it, on the routes that keep its bytes (body-reader.guard.ts): what a pass-through
 * family forwards or copies from (providers/shared/json-splice.ts). `req.body` is still the parsed JSON here;
 * the validated DTO is a separate object.
 */
export function clientSource(req: Request): JsonSource | undefined {
  return req.rawBody && { bytes: req.rawBody, parsed: req.body as unknown };
}
