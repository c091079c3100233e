import type { Request } from 'express';
import type { JsonSource } from '../../core/json-splice';

/**
 * The body as the client sent it, on the routes that keep its bytes (body-reader.guard.ts): what a pass-through
 * family forwards or copies from (core/json-splice.ts). `req.body` is the parsed JSON, and the
 * validated DTO is that same object (validation reads it, changes nothing): handlers build new objects for
 * whatever they send, so an unchanged member is the very value the splice finds in `parsed`.
 */
export function clientSource(req: Request): JsonSource | undefined {
  return req.rawBody && { bytes: req.rawBody, parsed: req.body as unknown };
}
