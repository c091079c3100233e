import type { IncomingMessage } from 'node:http';
import { GatewayException } from '../../core/errors/gateway.exception';
import {
  JsonShapeScanner,
  MAX_BODY_DEPTH,
  MAX_BODY_KEYS,
  MAX_BODY_SCALARS,
  MAX_BODY_VALUES,
  nextTurn,
  type ShapeExcess,
} from './json-shape';

/**
 * The body every SDK sends: `Content-Type: application/json` (or with `charset=utf-8`), no Content-Encoding.
 * The same compressed is read by compressed-json-body.ts; anything else (other charsets, `application/*+json`,
 * odd casing) by the guard with body-parser.
 */
export function isPlainJson(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  return (encoding === undefined || encoding === 'identity') && isPlainJsonType(req);
}

/** `Content-Type: application/json`, as SDKs send it (UTF-8, the charset named or not). */
export function isPlainJsonType(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  return (
    type === 'application/json' ||
    type === 'application/json; charset=utf-8' ||
    type === 'application/json;charset=utf-8'
  );
}

/**
 * From this size a body is decoded and parsed on later turns of the event loop, not in its 'end' event (see
 * there). Measured with the big-prompt scenario of `npm run bench` (docs/performance.md, big prompts).
 */
const YIELDING_BODY_BYTES = 64 * 1024;

/** Bytes scanned per turn of the event loop when a whole body is scanned at once (bodies body-parser read). */
const SCAN_SLICE_BYTES = 1024 * 1024;

/** A parsed body, its UTF-8 bytes and how many JSON values it holds. */
export interface ParsedJsonBody {
  body: unknown;
  bytes: Buffer;
  values: number;
}

/**
 * Reads and parses a plain JSON body (isPlainJson) with the same outcomes as body-parser's json() in strict
 * mode (413 past `limit`, 400 for a client that stopped sending, 400 for bytes that are not a JSON object or
 * array), at a fraction of its cost: body-parser (raw-body, type-is, iconv-lite, a stream listener per event)
 * was ~60 us of CPU per chat request under load. Like body-parser, a refused body is read to its end before the
 * answer, so the client is not cut off mid-send. Each chunk is scanned as it arrives (json-shape.ts): a body that
 * nests too deep or holds too many values is refused without being parsed, and its bytes are not kept.
 */
export function readPlainJson(
  req: IncomingMessage,
  limit: number,
  tooLarge: () => GatewayException,
): Promise<ParsedJsonBody> {
  return new Promise((resolve, reject) => {
    const collector = new JsonBodyCollector(limit, tooLarge);
    if (Number(req.headers['content-length']) > limit) collector.refuse(tooLarge());
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    const onData = (chunk: Buffer) => collector.push(chunk);
    const onEnd = () => {
      done();
      collector.parse().then(resolve, reject);
    };
    const onGone = () => {
      done();
      reject(clientStoppedSending());
    };
    if (req.destroyed) return onGone(); // gone before the guard got here
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

/**
 * A JSON body as it arrives, chunk by chunk (the request's bytes, or what an inflater makes of them): counted
 * against the limit and scanned (json-shape.ts) as each chunk comes, so a body that nests too deep or holds too
 * many values is refused without being joined or parsed, and its bytes are not kept.
 */
export class JsonBodyCollector {
  private readonly chunks: Buffer[] = [];
  private readonly scanner = new JsonShapeScanner();
  private received = 0;
  /** Why the body is refused, once it is: the rest of it is not kept. */
  refused: GatewayException | undefined;

  constructor(
    private readonly limit: number,
    private readonly tooLarge: () => GatewayException,
  ) {}

  /** Takes the next chunk; false once the body is refused. */
  push(chunk: Buffer): boolean {
    if (this.refused) return false;
    this.received += chunk.length;
    if (this.received > this.limit) this.refuse(this.tooLarge());
    else if (!this.scanner.push(chunk)) this.refuse(shapeRefusal(this.scanner.excess!));
    else this.chunks.push(chunk);
    return !this.refused;
  }

  refuse(reason: GatewayException): void {
    this.refused = reason;
    this.chunks.length = 0;
  }

  /** The whole body, parsed: at once when small, on later turns of the event loop when big (parseLater). */
  parse(): Promise<ParsedJsonBody> {
    if (this.refused) return Promise.reject(this.refused);
    const { chunks, received } = this;
    if (received < YIELDING_BODY_BYTES) {
      const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
      return new Promise((resolve, reject) =>
        settle(resolve, reject, () => ({
          body: parseStrict(decode(bytes)),
          bytes,
          values: this.scanner.values,
        })),
      );
    }
    return parseLater(() => Buffer.concat(chunks, received), this.scanner.values);
  }
}

/** The error for a client that went away before its body ended (400; nobody reads the answer). */
export function clientStoppedSending(): GatewayException {
  return new GatewayException('invalid_request', 'The client stopped sending the request body.', {
    wireCode: null,
  });
}

/**
 * A whole body's UTF-8 bytes (read by body-parser: compressed, another charset, `+json`), scanned then parsed.
 * A big body is scanned a slice per turn of the event loop, then decoded and parsed on turns of their own.
 */
export async function parseJsonBytes(bytes: Buffer): Promise<ParsedJsonBody> {
  const scanner = new JsonShapeScanner();
  for (let start = 0; start < bytes.length; start += SCAN_SLICE_BYTES) {
    if (start > 0) await nextTurn();
    if (!scanner.push(bytes.subarray(start, start + SCAN_SLICE_BYTES))) throw shapeRefusal(scanner.excess!);
  }
  if (bytes.length < YIELDING_BODY_BYTES)
    return { body: parseStrict(decode(bytes)), bytes, values: scanner.values };
  return parseLater(() => bytes, scanner.values);
}

/**
 * A big body's join, decode and parse are each a synchronous run of up to a few tens of milliseconds (the most
 * values a body may hold take ~5-15 ms to parse; a 15 MB prompt's join and decode are each a 15 MB copy into fresh
 * memory, 5-25 ms on a loaded machine, most of it the kernel's page faults). Each waits for its own turn of the
 * event loop, so the socket reads and replies of other requests that are already due go first instead of queueing
 * behind them.
 */
async function parseLater(join: () => Buffer, values: number): Promise<ParsedJsonBody> {
  await nextTurn();
  const bytes = join();
  await nextTurn();
  const text = decode(bytes);
  await nextTurn();
  return { body: parseStrict(text), bytes, values };
}

/** The error for a body the scan refused: nested too deep (400, as a parse error), or too many values (413). */
export function shapeRefusal(excess: ShapeExcess): GatewayException {
  if (excess === 'depth')
    return new GatewayException(
      'invalid_json',
      `The request body nests JSON more than ${MAX_BODY_DEPTH} levels deep.`,
    );
  const [limit, what] = {
    values: [MAX_BODY_VALUES, 'JSON objects, arrays and strings (keys not counted)'],
    scalars: [MAX_BODY_SCALARS, 'JSON numbers, true, false and null'],
    keys: [MAX_BODY_KEYS, 'distinct object keys'],
  }[excess];
  return new GatewayException(
    'request_too_large',
    `The request body holds more than ${limit.toLocaleString('en-US')} ${what}, the gateway's limit per request. Send fewer items per request.`,
  );
}

function settle<T>(resolve: (value: T) => void, reject: (error: unknown) => void, make: () => T): void {
  try {
    resolve(make());
  } catch (error) {
    reject(error);
  }
}

/** The body's text, a leading BOM dropped. */
function decode(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The refusal of a body that is JSON but not an object or an array (strict mode): the MCP endpoint tells it from a
 * body that did not parse (JSON-RPC's -32600 rather than -32700).
 */
export const NOT_AN_OBJECT = 'The request body is not valid JSON: it must be a JSON object.';

/** JSON.parse of the body's text, which must be an object or an array, as body-parser's strict mode. */
function parseStrict(text: string): unknown {
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') throw new GatewayException('invalid_json', NOT_AN_OBJECT);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new GatewayException(
      'invalid_json',
      `The request body is not valid JSON: ${(error as Error).message}`,
    );
  }
}
