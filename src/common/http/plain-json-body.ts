import type { IncomingMessage } from 'node:http';
import { GatewayException } from '../errors/gateway.exception';

/**
 * The body every SDK sends: `Content-Type: application/json` (or with `charset=utf-8`), no Content-Encoding.
 * Anything else (gzip, other charsets, `application/*+json`, odd casing) goes through body-parser.
 */
export function isPlainJson(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') return false;
  const type = req.headers['content-type'];
  return type === 'application/json' || type === 'application/json; charset=utf-8' || type === 'application/json;charset=utf-8';
}

/**
 * From this size a body is decoded and parsed on later turns of the event loop, not in its 'end' event (see
 * there). Measured with the big-prompt scenario of `npm run bench` (docs/performance.md, big prompts).
 */
const YIELDING_BODY_BYTES = 64 * 1024;

/**
 * Reads and parses a plain JSON body (isPlainJson) with the same outcomes as body-parser's json() in strict
 * mode (413 past `limit`, 400 for a client that stopped sending, 400 for bytes that are not a JSON object or
 * array), at a fraction of its cost: body-parser (raw-body, type-is, iconv-lite, a stream listener per event)
 * was ~60 us of CPU per chat request under load. Like body-parser, a refused body is read to its end before the
 * answer, so the client is not cut off mid-send.
 */
export function readPlainJson(req: IncomingMessage, limit: number, tooLarge: () => GatewayException): Promise<{ body: unknown; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let refused: GatewayException | undefined = Number(req.headers['content-length']) > limit ? tooLarge() : undefined;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    const onData = (chunk: Buffer) => {
      if (refused) return;
      received += chunk.length;
      if (received > limit) {
        refused = tooLarge();
        chunks.length = 0;
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      if (refused) return reject(refused);
      const parse = (bytes: Buffer, text: string) => {
        try {
          resolve({ body: parseStrict(text), bytes });
        } catch (error) {
          reject(error);
        }
      };
      if (received < YIELDING_BODY_BYTES) {
        const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
        return parse(bytes, decode(bytes));
      }
      // A big body's decode and parse are each a few hundred microseconds of one synchronous run (mostly the page
      // faults of a fresh half-megabyte string). Each waits for its own turn of the event loop, so the socket
      // reads and replies of other requests that are already due go first instead of queueing behind both.
      setImmediate(() => {
        const bytes = Buffer.concat(chunks, received);
        const text = decode(bytes);
        setImmediate(() => parse(bytes, text));
      });
    };
    const onGone = () => {
      done();
      reject(new GatewayException('invalid_request', 'The client stopped sending the request body.', { wireCode: null }));
    };
    if (req.destroyed) return onGone(); // gone before the guard got here
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

/** The body's text, a leading BOM dropped. */
function decode(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** JSON.parse of the body's text, which must be an object or an array, as body-parser's strict mode. */
function parseStrict(text: string): unknown {
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') {
    throw new GatewayException('invalid_json', 'The request body is not valid JSON: it must be a JSON object.');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new GatewayException('invalid_json', `The request body is not valid JSON: ${(error as Error).message}`);
  }
}
