import { GatewayException } from '../../core/errors/gateway.exception';
import { topLevelMembers } from '../../core/json-splice';

/** The `anthropic_version` Vertex's Claude endpoint requires in the body (in place of the header). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

const VERSION_MEMBER = Buffer.from(`{"anthropic_version":${JSON.stringify(VERTEX_ANTHROPIC_VERSION)}`);
const SEPARATOR = Buffer.from(',');
const CLOSE = Buffer.from('}');

/**
 * A Messages body (the client's own bytes, `model` already the deployment's) as Vertex takes it: `model` left out
 * (the model is in the path) and `anthropic_version` added; every other member copied byte for byte, so thinking
 * signatures and everything Claude Code sent reach the model as they were written. Also returns the model named.
 */
export function vertexMessagesBody(body: string | Buffer): { model: string; body: Buffer } {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const members = topLevelMembers(bytes);
  if (!members) return rebuilt(bytes); // a key given twice: written anew from what JSON.parse kept
  const span = members.get('model');
  // The span is the member (`"model": "..."`): as an object of its own it parses to the value whatever its spelling.
  const model = span
    ? Object.values(JSON.parse(`{${bytes.toString('utf8', span.start, span.end)}}`) as object)[0]
    : undefined;
  if (typeof model !== 'string') throw noModel();
  const parts: Buffer[] = [VERSION_MEMBER];
  for (const [key, { start, end }] of members) {
    if (key === 'model' || key === 'anthropic_version') continue;
    parts.push(SEPARATOR, bytes.subarray(start, end));
  }
  parts.push(CLOSE);
  return { model, body: Buffer.concat(parts) };
}

function rebuilt(bytes: Buffer): { model: string; body: Buffer } {
  const rest = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  const model = rest.model;
  if (typeof model !== 'string') throw noModel();
  delete rest.model;
  delete rest.anthropic_version;
  return {
    model,
    body: Buffer.from(JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest })),
  };
}

/**
 * A count_tokens body for Vertex's `count-tokens:rawPredict`: the same Messages members, `model` kept (it names
 * the model counted for: `model`), `anthropic_version` added.
 */
export function vertexCountTokensBody(body: string | Buffer, model: string): string {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const rest = JSON.parse(text) as Record<string, unknown>;
  delete rest.anthropic_version;
  return JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest, model });
}

/** The client's `anthropic-beta` values Vertex accepts, comma-joined (undefined when none is left). */
export function vertexBetas(
  header: string | string[] | undefined,
  accepted: readonly string[],
): string | undefined {
  const values = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value && accepted.includes(value));
  return values.length ? [...new Set(values)].join(',') : undefined;
}

function noModel(): GatewayException {
  return new GatewayException('internal_error', 'The Messages body for Vertex names no model.');
}
