import { Readable } from 'node:stream';
import { Pool, errors as undiciErrors } from 'undici';
import type { BackendConfig } from '../config/config.schema';
import { GatewayException } from '../core/errors/gateway.exception';
import type { UpstreamCall } from '../core/upstream-call';
import { ConnectionSlots } from './shared/connection-slots';
import { probeConnect } from './shared/connect-probe';
import type { Usage } from '../core/openai-types';

/** What the gateway needs of a response body: read it whole, or as a byte stream. */
export interface UpstreamBody extends AsyncIterable<Uint8Array> {
  json(): Promise<unknown>;
  text(): Promise<string>;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: UpstreamBody;
}

/** How a backend is reached: over HTTP (UpstreamClient) or in a local worker (LocalModelClient). */
export interface BackendClient {
  send(call: UpstreamCall, signal: AbortSignal): Promise<UpstreamResponse>;
  /** Maps a transport failure to what the client sees. */
  transportError(error: unknown): unknown;
  /**
   * True when starting a request and cancelling it at once costs nothing billable and stops all work (a local
   * model): the chat service then starts it while the team's admission is still in flight, and cancels it if
   * the admission refuses. Never for a vendor, which may bill a prompt it has received.
   */
  readonly cancelsAtNoCost?: boolean;
  /** Whether the model behind it can reason (`thinking`), when the backend itself decides (a local GGUF's template). */
  canThink?(): boolean | undefined;
  /** Requests in flight now (least-busy routing). */
  inFlight?(): number;
  /**
   * Whether the backend can be reached (routing/backend-health.ts): why not, or undefined. A network backend opens
   * a bounded connection to its base URL and sends nothing.
   */
  probe?(timeoutMs: number): Promise<string | undefined>;
  /** Why the backend cannot serve anything now, when it knows by itself (a local model whose file cannot load). */
  unusable?(): string | undefined;
  close(): Promise<void>;
}

/**
 * One pooled keep-alive connection set (undici Pool) per backend. Transport
 * failures become gateway errors here: unreachable -> 502, timeouts -> 504.
 */
export class UpstreamClient implements BackendClient {
  private readonly pool: Pool;
  private readonly slots: ConnectionSlots;
  private readonly basePath: string;
  private readonly baseUrl: string;

  constructor(
    private readonly backendId: string,
    config: BackendConfig,
  ) {
    const url = new URL(config.baseUrl);
    this.baseUrl = config.baseUrl;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.slots = new ConnectionSlots(backendId, config.maxConnections, config.timeouts.connectionWaitMs);
    this.pool = new Pool(url.origin, {
      connections: config.maxConnections,
      connect: { timeout: config.timeouts.connectMs },
      headersTimeout: config.timeouts.firstByteMs,
      bodyTimeout: config.timeouts.idleMs,
      keepAliveTimeout: 30_000,
    });
  }

  async send(call: UpstreamCall, signal: AbortSignal): Promise<UpstreamResponse> {
    const release = await this.slots.acquire(signal);
    try {
      const { headers, body } = requestBody(call);
      const response = await this.pool.request({
        method: 'POST',
        path: this.basePath + call.path,
        headers,
        body,
        signal,
        ...(call.timeouts?.firstByteMs !== undefined ? { headersTimeout: call.timeouts.firstByteMs } : {}),
        ...(call.timeouts?.idleMs !== undefined ? { bodyTimeout: call.timeouts.idleMs } : {}),
      });
      // The connection is busy until the body is consumed or destroyed ('close' fires either way).
      response.body.once('close', release);
      return { status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      release();
      throw this.transportError(error);
    }
  }

  inFlight(): number {
    return this.slots.inUse;
  }

  probe(timeoutMs: number): Promise<string | undefined> {
    return probeConnect(this.baseUrl, timeoutMs);
  }

  /** Maps an undici/socket error (while connecting or reading) to what the client sees. */
  transportError(error: unknown): unknown {
    if (error instanceof GatewayException || isAbort(error)) return error;
    if (
      error instanceof undiciErrors.HeadersTimeoutError ||
      error instanceof undiciErrors.BodyTimeoutError ||
      error instanceof undiciErrors.ConnectTimeoutError
    ) {
      return new GatewayException('upstream_timeout', `Backend "${this.backendId}" did not answer in time.`, {
        cause: error,
      });
    }
    return new GatewayException('upstream_unreachable', `Backend "${this.backendId}" could not be reached.`, {
      cause: error,
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Request bodies at least this large are not held by undici while the answer lasts (`requestBody`). */
export const UNHELD_BODY_BYTES = 16 * 1024;

/**
 * The body as undici is given it. undici keeps a request's body (its Request and the request handler) until the
 * response ends, which for a stream is its whole life: an agent's 200 KB conversation held per open stream, beside
 * the copy of it the gateway parsed (docs/performance.md, held streams). A large body is handed over as a stream
 * that gives its bytes once, with its Content-Length, so they can be collected once written; the wire is the same. Small bodies stay a Buffer or string: undici's one-write path is cheaper, and holding them costs little.
 */
function requestBody(call: UpstreamCall): {
  headers: Record<string, string>;
  body: string | Buffer | Readable;
} {
  const bytes = typeof call.body === 'string' ? undefined : call.body;
  const size = bytes ? bytes.length : call.body.length * 3; // UTF-16 units -> at most 3 UTF-8 bytes each
  if (size < UNHELD_BODY_BYTES) return { headers: call.headers, body: ownBytes(call.body) };
  const encoded = bytes ?? Buffer.from(call.body as string);
  if (encoded.length < UNHELD_BODY_BYTES) return { headers: call.headers, body: ownBytes(encoded) };
  return {
    headers: { ...call.headers, 'content-length': String(encoded.length) },
    body: givenOnce(encoded),
  };
}

/**
 * A small body as bytes of its own. undici turns a string into a Buffer, and a small Buffer (from `Buffer.from`,
 * a splice) is a slice of Node's shared 8 KB pool: held with the request for a stream's whole life, each body kept
 * the whole slab it was cut from alive, with whatever else was cut from it (~0.2-0.9 KB a held stream measured,
 * bench/held-heap.mjs). An exact allocation holds only the body.
 */
function ownBytes(body: string | Buffer): Buffer {
  if (typeof body !== 'string') {
    if (body.byteOffset === 0 && body.byteLength === body.buffer.byteLength) return body;
    const own = Buffer.allocUnsafeSlow(body.length);
    body.copy(own);
    return own;
  }
  const own = Buffer.allocUnsafeSlow(Buffer.byteLength(body));
  own.write(body);
  return own;
}

/**
 * A stream of `bytes` that forgets them as it hands them over: once read, they are referenced only by whoever
 * read them (the socket, until written), even while the stream itself lives on with the request.
 */
function givenOnce(bytes: Buffer): Readable {
  let unread: Buffer | undefined = bytes;
  return new Readable({
    read() {
      this.push(unread ?? null);
      unread = undefined;
    },
  });
}

/**
 * A failure while reading or parsing a reply the backend had started to send (a connection cut mid-body, a
 * body that is not what its format says): the backend was reached, so this is `upstream_error` (502), not
 * `upstream_unreachable`; a body that stalls past `idleMs` is `upstream_timeout`.
 */
export function replyError(backendId: string, error: unknown): unknown {
  if (error instanceof GatewayException || isAbort(error)) return error;
  if (error instanceof undiciErrors.BodyTimeoutError) {
    return new GatewayException(
      'upstream_timeout',
      `Backend "${backendId}" went silent in the middle of its reply.`,
      { cause: error },
    );
  }
  const what =
    error instanceof SyntaxError || error instanceof TypeError
      ? 'a malformed reply'
      : 'a reply that was cut off';
  return new GatewayException('upstream_error', `Backend "${backendId}" sent ${what}.`, { cause: error });
}

/**
 * The request was abandoned (the client left, or the gateway cut it), and the backend reported exactly what it
 * had spent on it by then (a local model does): accounted as that usage instead of an estimate.
 */
export class AbortedWithUsage extends Error {
  constructor(readonly usage: Usage | undefined) {
    super('aborted');
    this.name = 'AbortError';
  }
}

export function isAbort(error: unknown): boolean {
  return (
    error instanceof undiciErrors.RequestAbortedError ||
    (error instanceof Error &&
      (error.name === 'AbortError' || (error as { code?: string }).code === 'ABORT_ERR'))
  );
}
