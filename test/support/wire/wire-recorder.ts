import { appendFileSync, mkdirSync } from 'node:fs';
import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import { join } from 'node:path';
import {
  checkAnthropic,
  checkOpenAI,
  compileWireSchemas,
  openaiOperationSchema,
  type SchemaErrors,
} from './vendor-schemas';

/**
 * Every answer the gateway gives on a vendor's API, checked against that vendor's published shapes as it
 * leaves: the recorder taps the gateway's HTTP server (what each response wrote, whatever client sent the
 * request: the SDKs, the CLIs, fetch), so every e2e spec's real exchanges are validated, not hand-written
 * samples. OpenAI routes are checked against the schema the pinned OpenAPI document gives that path, method,
 * status and media type (error statuses against its ErrorResponse), stream events one by one; Messages routes
 * against the Anthropic SDK's types. Violations fail the test that caused them (jest-setup.ts) or, for an
 * exchange that ends later, the spec's `close()`.
 */
export interface CheckedExchange {
  api: 'openai' | 'anthropic';
  kind: string;
  method: string;
  path: string;
  status: number;
  /** The backend family that answered (x-switchyard-backend), when one did. */
  family: string;
  /** Stream events checked (0 for a JSON body). */
  events: number;
}

interface Route {
  api: 'openai' | 'anthropic';
  kind: string;
  /** The path in OpenAI's document, for OpenAI routes. */
  specPath?: string;
}

/** The gateway's own API under /v1 (a team reads its usage and its request log): not a vendor's. */
const OWN_V1 = /^\/v1\/(usage|requests)(\/|$)/;

/** The vendor routes the gateway serves (everything else, such as /admin or /v1/usage, is its own API). */
function routeOf(method: string, path: string): Route | undefined {
  if (path === '/v1/messages') return { api: 'anthropic', kind: 'messages' };
  if (path === '/v1/messages/count_tokens') return { api: 'anthropic', kind: 'count_tokens' };
  if (path.startsWith('/v1/messages/')) return { api: 'anthropic', kind: 'messages.other' };
  if (path === '/v1/chat/completions') return { api: 'openai', kind: 'chat', specPath: '/chat/completions' };
  if (path === '/v1/embeddings') return { api: 'openai', kind: 'embeddings', specPath: '/embeddings' };
  if (path === '/v1/models') return { api: 'openai', kind: 'models.list', specPath: '/models' };
  if (/^\/v1\/models\/[^/]+$/.test(path))
    return { api: 'openai', kind: 'models.retrieve', specPath: '/models/{model}' };
  if (path === '/v1/responses') return { api: 'openai', kind: 'responses', specPath: '/responses' };
  if (/^\/v1\/responses\/[^/]+\/input_items$/.test(path))
    return { api: 'openai', kind: 'responses.input_items', specPath: '/responses/{response_id}/input_items' };
  if (/^\/v1\/responses\/[^/]+$/.test(path))
    return {
      api: 'openai',
      kind: method === 'DELETE' ? 'responses.delete' : 'responses.retrieve',
      specPath: '/responses/{response_id}',
    };
  if (path.startsWith('/v1/') && !OWN_V1.test(path)) return { api: 'openai', kind: 'other' };
  return undefined;
}

const live = new Set<WireRecorder>();

/** Recorders of gateways still running in this test file (jest-setup.ts checks them after each test). */
export function liveRecorders(): WireRecorder[] {
  return [...live];
}

export class WireRecorder {
  readonly checked: CheckedExchange[] = [];
  private violations: string[] = [];
  /** Exchanges on vendor routes that the vendor documents no body for (DELETE /v1/responses/{id}'s 200). */
  unspecified = 0;

  constructor(private readonly familyOf: (backendId: string) => string | undefined) {
    compileWireSchemas();
    live.add(this);
  }

  attach(server: Server): void {
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => this.tap(req, res));
  }

  /** Exchanges closed whose check has not run yet. */
  private pending = 0;

  /** Resolves once every closed exchange has been checked. */
  async settled(): Promise<void> {
    while (this.pending > 0) await new Promise((resolve) => setImmediate(resolve));
  }

  /** The violations found since the last call. */
  takeViolations(): string[] {
    const out = this.violations;
    this.violations = [];
    return out;
  }

  /** Stops checking; writes the summary when WIRE_REPORT_DIR is set (for coverage reports). */
  detach(label: string): void {
    live.delete(this);
    const dir = process.env.WIRE_REPORT_DIR;
    if (!dir || !this.checked.length) return;
    mkdirSync(dir, { recursive: true });
    appendFileSync(
      join(dir, `${process.pid}.jsonl`),
      this.checked.map((exchange) => JSON.stringify({ spec: label, ...exchange })).join('\n') + '\n',
    );
  }

  private tap(req: IncomingMessage, res: ServerResponse): void {
    const method = req.method ?? 'GET';
    const path = (req.url ?? '/').split('?')[0];
    const route = routeOf(method, path);
    if (!route || method === 'HEAD' || method === 'OPTIONS') return;
    const chunks: Buffer[] = [];
    let headHeaders: OutgoingHttpHeaders | undefined;
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      chunks.push(
        typeof chunk === 'string'
          ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
          : Buffer.from(chunk as Uint8Array),
      );
    };
    const write = res.write;
    const end = res.end;
    const writeHead = res.writeHead;
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse['write'];
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as ServerResponse['end'];
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      const headers = args.find((arg, i) => i > 0 && arg && typeof arg === 'object' && !Array.isArray(arg));
      const written = (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
      // Read as the head leaves: a stream forgets its header map once sent (core/sse-writer.ts compactSentHead).
      headHeaders = { ...res.getHeaders(), ...(headers as OutgoingHttpHeaders | undefined) };
      return written;
    } as ServerResponse['writeHead'];
    res.once('close', () => {
      const header = (name: string) => String(headerIn(headHeaders, name) ?? res.getHeader(name) ?? '');
      const exchange = [
        route,
        method,
        path,
        res.statusCode,
        header('content-type'),
        header('x-switchyard-backend'),
        Buffer.concat(chunks).toString('utf8'),
        res.writableFinished,
      ] as const;
      // Checked after the gateway's own 'close' listeners (a client that left must see its upstream call aborted at once).
      this.pending++;
      setImmediate(() => {
        this.pending--;
        try {
          this.check(...exchange);
        } catch (error) {
          this.violations.push(`${method} ${path}: the recorder failed: ${(error as Error).stack}`);
        }
      });
    });
  }

  private check(
    route: Route,
    method: string,
    path: string,
    status: number,
    contentType: string,
    backend: string,
    text: string,
    finished: boolean,
  ): void {
    const where = `${method} ${path} ${status}`;
    const exchange: CheckedExchange = {
      api: route.api,
      kind: route.kind,
      method,
      path,
      status,
      family: (backend && this.familyOf(backend)) || '-',
      events: 0,
    };
    const fail = (what: string, errors: SchemaErrors, sample?: unknown) => {
      if (errors)
        this.violations.push(
          `${where} (${exchange.family}) ${what}:\n  ${errors.join('\n  ')}${sample === undefined ? '' : `\n  in ${JSON.stringify(sample).slice(0, 600)}`}`,
        );
    };
    if (!text && !finished) return; // the client left before any byte: nothing was said
    const isStream = /^text\/event-stream/.test(contentType);
    if (status >= 400 || route.kind === 'other' || route.kind === 'messages.other') {
      exchange.kind = route.api === 'anthropic' ? 'error.anthropic' : 'error';
      const body = parseJson(text);
      if (!/^application\/json/.test(contentType))
        fail(`content-type ${contentType || '(none)'}`, ['an error body must be application/json']);
      if (body === undefined) return fail('body', ['is not JSON'], text.slice(0, 200));
      fail(
        'error body',
        route.api === 'anthropic'
          ? checkAnthropic('ErrorResponse', body)
          : checkOpenAI('ErrorResponse', body),
        body,
      );
      this.checked.push(exchange);
      return;
    }
    if (route.api === 'anthropic') {
      if (isStream) {
        exchange.kind = 'messages.stream';
        for (const event of sseEvents(text, finished)) {
          exchange.events++;
          if (event.event === undefined) {
            fail('stream event', ['has no `event:` line (the Anthropic SDK drops such events)'], event.data);
            continue;
          }
          const data = parseJson(event.data);
          if (data === undefined) {
            fail(`event ${event.event}`, ['data is not JSON'], event.data);
            continue;
          }
          if ((data as { type?: unknown }).type !== event.event)
            fail(`event ${event.event}`, ['its JSON `type` differs from the `event:` name'], data);
          const type =
            event.event === 'ping'
              ? 'Ping'
              : event.event === 'error'
                ? 'StreamError'
                : 'RawMessageStreamEvent';
          fail(`event ${event.event}`, checkAnthropic(type, data), data);
        }
      } else {
        const body = parseJson(text);
        if (body === undefined) return fail('body', ['is not JSON'], text.slice(0, 200));
        fail(
          route.kind,
          checkAnthropic(route.kind === 'count_tokens' ? 'MessageTokensCount' : 'Message', body),
          body,
        );
      }
      this.checked.push(exchange);
      return;
    }
    const mediaType = isStream ? 'text/event-stream' : 'application/json';
    if (!isStream && !/^application\/json/.test(contentType))
      fail(`content-type ${contentType || '(none)'}`, ['a JSON body must be application/json']);
    const schema = openaiOperationSchema(route.specPath!, method.toLowerCase(), status, mediaType);
    if (!schema) {
      this.unspecified++;
      return;
    }
    if (isStream) {
      exchange.kind = `${route.kind}.stream`;
      let done = false;
      for (const event of sseEvents(text, finished)) {
        exchange.events++;
        if (done) fail('stream', ['an event follows data: [DONE]'], event.data);
        if (event.data === '[DONE]') {
          if (route.kind !== 'chat') fail('stream', ['data: [DONE] is chat completions only']);
          done = true;
          continue;
        }
        const data = parseJson(event.data);
        if (data === undefined) {
          fail('stream event', ['data is not JSON'], event.data);
          continue;
        }
        if (route.kind === 'chat') {
          // openai-node parses named events as chunks of their own: chat streams carry only `data:` lines.
          if (event.event !== undefined)
            fail('stream event', [`has an \`event: ${event.event}\` line`], data);
          const isError = typeof data === 'object' && data !== null && 'error' in data;
          fail(
            isError ? 'in-band error' : 'chunk',
            isError ? checkOpenAI('ErrorResponse', data) : checkOpenAI(schema, data),
            data,
          );
        } else {
          const type = (data as { type?: unknown }).type;
          if (event.event !== type)
            fail(`event ${String(type)}`, [`its \`event:\` line says ${String(event.event)}`], data);
          fail(`event ${String(type)}`, checkOpenAI(schema, data), data);
        }
      }
    } else {
      const body = parseJson(text);
      if (body === undefined) return fail('body', ['is not JSON'], text.slice(0, 200));
      fail(
        exchange.kind,
        checkOpenAI(
          schema,
          route.kind === 'embeddings'
            ? withBase64Decoded(body, (error) => fail('embeddings', [error]))
            : body,
        ),
        body,
      );
    }
    this.checked.push(exchange);
  }
}

/**
 * `encoding_format: "base64"` embeddings are strings: the document describes that option (and the SDKs send it
 * by default) but types `embedding` as the float array only. A base64 embedding must decode to whole float32s;
 * the body is then checked with the decoded numbers in its place.
 */
function withBase64Decoded(body: unknown, fail: (error: string) => void): unknown {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return body;
  return {
    ...(body as object),
    data: data.map((item: { embedding?: unknown }, i) => {
      if (typeof item?.embedding !== 'string') return item;
      const bytes = Buffer.from(item.embedding, 'base64');
      if (bytes.toString('base64') !== item.embedding || bytes.length % 4 !== 0)
        fail(`/data/${i}/embedding is not base64 of float32 values`);
      return {
        ...item,
        embedding: Array.from({ length: Math.floor(bytes.length / 4) }, (_, k) => bytes.readFloatLE(k * 4)),
      };
    }),
  };
}

function headerIn(headers: OutgoingHttpHeaders | undefined, name: string): unknown {
  if (!headers) return undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key ? headers[key] : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The complete events of an SSE body (a stream cut by the client may end inside one: that one is left out). */
function sseEvents(text: string, finished: boolean): Array<{ event?: string; data: string }> {
  const blocks = text.split(/\r\n\r\n|\n\n|\r\r/);
  const complete = finished ? blocks : blocks.slice(0, -1);
  const events: Array<{ event?: string; data: string }> = [];
  for (const block of complete) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r\n|\n|\r/)) {
      if (!line || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length || event !== undefined) events.push({ event, data: data.join('\n') });
  }
  return events;
}
