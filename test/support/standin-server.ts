import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { seededRandom } from '../fuzz/body-mutator';

export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
  /** The body's text exactly as it arrived. */
  text: string;
  /** The ids of the tool calls the stand-in answered it with, in order (for tests that follow ids through). */
  toolCallIds?: string[];
  /** The usage the stand-in answered with, in its vendor's own members (for tests that price it by hand). */
  usage?: Record<string, any>;
}

/** The fuzzer's seeded PRNG: a stand-in's ids and random choices come from it, so a run repeats exactly. */
export { seededRandom };

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The HTTP plumbing every stand-in vendor server shares: listen, record requests, count calls, stop. */
export abstract class StandInServer {
  readonly requests: RecordedRequest[] = [];
  /** Every random choice and id of this stand-in (seeded: `new XUpstream(seed)` repeats a run). */
  readonly random: () => number;
  /** What made a handler throw (see receive): a test that drives odd bodies through expects none. */
  readonly crashes: string[] = [];
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  constructor(readonly seed = 34) {
    this.random = seededRandom(seed);
  }

  /** An id the vendor's way: `prefix` then `length` characters from the seeded PRNG. */
  id(prefix: string, length = 24): string {
    let id = prefix;
    for (let i = 0; i < length; i++) id += ID_ALPHABET[Math.floor(this.random() * ID_ALPHABET.length)];
    return id;
  }

  /** The model a request asked for (in the body, or in the path for Gemini). */
  protected modelOf(recorded: RecordedRequest): string {
    return String(recorded.body.model ?? '');
  }

  /**
   * How many calls reached this stand-in, optionally only those to one path (without its query string), for one
   * model, or whose body contains a text (a test's own marker, so calls other tests made are not counted).
   */
  calls(filter: { path?: string; model?: string; containing?: string } = {}): number {
    return this.requests.filter(
      (r) =>
        (filter.path === undefined || r.path.split('?')[0] === filter.path) &&
        (filter.model === undefined || this.modelOf(r) === filter.model) &&
        (filter.containing === undefined || r.text.includes(filter.containing)),
    ).length;
  }

  protected abstract handle(
    recorded: RecordedRequest,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> | void;

  get origin(): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.receive(req, res));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /**
   * Answers a request as this stand-in does, for a stand-in that serves this vendor's API behind its own (Vertex
   * AI's Claude and Gemini publishers).
   */
  answer(recorded: RecordedRequest, req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    return this.handle(recorded, req, res);
  }

  /** As `answer`, for a request rewritten for this vendor (`inner`): the usage it answered is recorded on `outer`. */
  async answerFor(
    outer: RecordedRequest,
    inner: RecordedRequest,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    await this.handle(inner, req, res);
    if (inner.usage) outer.usage = inner.usage;
  }

  last(): RecordedRequest {
    return this.requests[this.requests.length - 1];
  }

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const recorded: RecordedRequest = {
      path: req.url ?? '',
      headers: req.headers,
      // An OAuth token request (a form) is read from `text`; every other body must be JSON, as before.
      body: isForm(req.headers['content-type']) ? {} : JSON.parse(text || '{}'),
      text,
    };
    this.requests.push(recorded);
    try {
      await this.handle(recorded, req, res);
    } catch (error) {
      // A stand-in that throws is a bug in the stand-in (a vendor answers every request): it is kept for the test
      // to show, and the request gets a 500 instead of hanging until a timeout.
      this.crashes.push(`${recorded.path}: ${String(error)} for ${text.slice(0, 300)}`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"stand-in crashed"}}');
    }
  }
}

function isForm(contentType: string | undefined): boolean {
  return (contentType ?? '').startsWith('application/x-www-form-urlencoded');
}

/**
 * A stand-in's embedding of a text (OpenAI's: the JSON of a token array): each dimension an FNV-1a hash of the text and the
 * dimension's index, scaled to [-1, 1]. Equal texts give equal vectors, and a test can work out what to expect.
 */
export function standInEmbedding(text: string, dimensions: number): number[] {
  return Array.from({ length: dimensions }, (_, i) => {
    let hash = 2166136261 ^ i;
    for (let c = 0; c < text.length; c++) hash = Math.imul(hash ^ text.charCodeAt(c), 16777619);
    return ((hash >>> 0) / 4294967295) * 2 - 1;
  });
}

/** What the `reasoner` models (chat completions and Responses) reason before they answer. */
export const REASONING = 'Thinking it over.';

export const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

/**
 * A stand-in model "decides" to call a tool when the user asks it in so many words: `call <Tool> with <JSON>`
 * (the tests use it to drive real agents, such as Claude Code, through a tool they then really run).
 */
export function requestedToolCall(
  userText: string,
): { name: string; input: Record<string, unknown> } | undefined {
  const match = /call (\w+) with (\{.*?\})(?:\s|$)/s.exec(userText);
  if (!match) return undefined;
  try {
    return { name: match[1], input: JSON.parse(match[2]) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

/**
 * What a model "generates" when the answer it would give is `text`, as the vendors document it: generation ends at
 * the first stop sequence (which is not part of the output) or after `maxTokens` tokens (a stand-in token is a
 * word with its trailing space), whichever comes first.
 */
export function generate(
  text: string,
  limits: { maxTokens?: number; stops?: string[] },
): { text: string; tokens: string[]; ended: 'naturally' | 'max_tokens' | 'stop_sequence'; stop?: string } {
  let end = text.length;
  let stop: string | undefined;
  for (const candidate of limits.stops ?? []) {
    const at = candidate ? text.indexOf(candidate) : -1;
    if (at >= 0 && at < end) [end, stop] = [at, candidate];
  }
  const tokens = text
    .slice(0, end)
    .split(/(?<= )/)
    .filter(Boolean);
  if (limits.maxTokens !== undefined && tokens.length > limits.maxTokens) {
    const kept = tokens.slice(0, limits.maxTokens);
    return { text: kept.join(''), tokens: kept, ended: 'max_tokens' };
  }
  return {
    text: tokens.join(''),
    tokens,
    ended: stop === undefined ? 'naturally' : 'stop_sequence',
    ...(stop === undefined ? {} : { stop }),
  };
}
