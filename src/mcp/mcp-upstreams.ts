import type { Readable } from 'node:stream';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Client, Transport } from '@modelcontextprotocol/client';
import { AppLogger } from '../common/logging/logger';
import { GatewayConfig, type McpServerConfig } from '../config/config.schema';
import { MetricsService } from '../metrics/metrics.service';
import { onBoundedLines } from './bounded-lines';
import { McpCircuit } from './mcp-circuit';
import { JsonRpcCode, McpAnswerError, withoutPrefix } from './mcp-errors';
import { mcpSdk } from './mcp-sdk';
import { RequestLogRedactor } from '../request-log/request-log-redactor';
import { UpstreamRedaction } from './upstream-redaction';
import { classifyFailure, type UpstreamPhase, type UpstreamRequestKind } from './upstream-failures';

/** The gateway's name as an MCP client of its upstream servers (and as a server to its own clients). */
export const GATEWAY_IMPLEMENTATION = { name: 'switchyard', version: '0.1.0' };

/** A server's list answer has at most this many pages followed (a server that pages forever is an error). */
const MAX_PAGES = 20;

/** How a server stands on this replica, for the console and the admin API. */
export interface UpstreamHealth {
  id: string;
  kind: 'remote' | 'local';
  state: 'connected' | 'not-connected' | 'failing';
  /** The last failure (connecting, listing, calling), its credentials redacted; null after a success. */
  lastError: string | null;
  /** The tools it listed last (its own names). */
  tools: string[];
  /** While it is skipped after failing (mcp-circuit.ts): when it is next tried (ISO time); else null. */
  retryAt: string | null;
}

/**
 * A request could not reach the server (down, refused, its process gone, the connection lost) or it did not answer
 * in its `timeoutMs`: an MCP error to the client, never a hung request. `reason` is `unavailable` or `timeout`.
 */
export class UpstreamFailure extends McpAnswerError {
  constructor(
    readonly server: string,
    readonly reason: 'unavailable' | 'timeout',
    /** Set when the server was not asked: it is skipped until then (epoch ms) after failing. */
    skippedUntil?: number,
    /** This request failed, not the server (upstream-failures.ts): a call that timed out, an answer not readable. */
    readonly requestOnly = false,
  ) {
    super(
      reason === 'timeout' ? JsonRpcCode.RequestTimeout : JsonRpcCode.InternalError,
      skippedUntil !== undefined
        ? `MCP server "${server}" is down (it failed; tried again in ${Math.max(1, Math.ceil((skippedUntil - Date.now()) / 1000))} s).`
        : reason === 'timeout'
          ? `MCP server "${server}" did not answer in time.`
          : requestOnly
            ? `MCP server "${server}" failed this request.`
            : `MCP server "${server}" is unavailable.`,
    );
  }
}

interface Upstream {
  id: string;
  config: McpServerConfig;
  /** What of the server's words may leave the gateway (upstream-redaction.ts). */
  redaction: UpstreamRedaction;
  /** Whether it is asked at all, after failing (mcp-circuit.ts). */
  circuit: McpCircuit;
  client?: Promise<Client>;
  lastError: string | null;
  connected: boolean;
  tools: ReadonlySet<string>;
  /** Counts connections made, so a connection that ends late cannot clear the one made after it. */
  generation: number;
  /** Its lists as it answered them last, whole (before any team's permissions), for `mcp.listCacheMs`. */
  lists: Map<ListKind, CachedList>;
}

type ListKind = 'tools' | 'prompts' | 'resources' | 'templates';

/** A server's list: being asked (`until` Infinity: every request meanwhile waits for the same answer), or answered. */
interface CachedList {
  until: number;
  items: Promise<unknown[]>;
}

/**
 * The gateway's connections to its MCP servers, one per server per replica, made with the official SDK's Client
 * (@modelcontextprotocol/client; Streamable HTTP for a remote server, its credentials from `headers`; stdio for a
 * local one, started on first use and restarted after it dies), on 2026-07-28 with a server that serves it and on
 * the 2025 revisions with one that does not (the era is negotiated once per connection). Every request is bounded
 * by the server's `timeoutMs`, connecting included; a connection that failed is dropped and made again by the next
 * request. Shared by every team: the credentials are the gateway's, and who may use what is decided before a
 * request gets here (mcp-permissions.ts).
 */
@Injectable()
export class McpUpstreams implements OnModuleDestroy {
  private readonly upstreams = new Map<string, Upstream>();
  private readonly listCacheMs: number;

  constructor(
    config: GatewayConfig,
    private readonly logger: AppLogger,
    private readonly metrics: MetricsService,
    redactor: RequestLogRedactor,
  ) {
    for (const [id, server] of Object.entries(config.mcp.servers))
      this.upstreams.set(id, {
        id,
        config: server,
        redaction: new UpstreamRedaction(server, redactor),
        circuit: new McpCircuit(config.mcp.backoff),
        lastError: null,
        connected: false,
        tools: new Set(),
        generation: 0,
        lists: new Map(),
      });
    this.listCacheMs = config.mcp.listCacheMs;
  }

  /** The configured server ids, in config order. */
  ids(): string[] {
    return [...this.upstreams.keys()];
  }

  has(id: string): boolean {
    return this.upstreams.has(id);
  }

  /** Whether the server listed this tool last time (metric labels take only listed names: they are bounded). */
  listed(id: string, tool: string): boolean {
    return this.upstreams.get(id)?.tools.has(tool) ?? false;
  }

  health(): UpstreamHealth[] {
    return [...this.upstreams.values()].map((upstream) => ({
      id: upstream.id,
      kind: upstream.config.url ? 'remote' : 'local',
      state: upstream.lastError ? 'failing' : upstream.connected ? 'connected' : 'not-connected',
      lastError: upstream.lastError,
      tools: [...upstream.tools],
      retryAt: upstream.circuit.retryAt === null ? null : new Date(upstream.circuit.retryAt).toISOString(),
    }));
  }

  /**
   * Every tool of the server (all its pages). `fresh`: asked now, even when a 2026-07-28 server said its last list
   * may be reused for a while (its `ttlMs`); otherwise such a list is reused until then.
   */
  async listTools(id: string, signal?: AbortSignal, fresh = false, probe = true) {
    const tools = await this.list(
      id,
      'tools',
      signal,
      (asking) =>
        this.request(
          id,
          asking,
          'list',
          (client, options) =>
            offered(client, 'tools', () =>
              client
                .listTools(undefined, { ...options, ...(fresh ? { cacheMode: 'refresh' as const } : {}) })
                .then((list) => list.tools),
            ),
          probe,
        ),
      !fresh && probe,
    );
    this.upstream(id).tools = new Set(tools.map((tool) => tool.name));
    return tools;
  }

  async callTool(id: string, name: string, args: Record<string, unknown> | undefined, signal?: AbortSignal) {
    return this.request(id, signal, 'call', (client, options) =>
      client.callTool({ name, arguments: args }, options),
    );
  }

  async listPrompts(id: string, signal?: AbortSignal) {
    return this.list(id, 'prompts', signal, (asking) =>
      this.request(id, asking, 'list', (client, options) =>
        offered(client, 'prompts', () => client.listPrompts(undefined, options).then((list) => list.prompts)),
      ),
    );
  }

  async getPrompt(id: string, name: string, args: Record<string, string> | undefined, signal?: AbortSignal) {
    return this.request(id, signal, 'read', (client, options) =>
      client.getPrompt({ name, arguments: args }, options),
    );
  }

  async listResources(id: string, signal?: AbortSignal) {
    return this.list(id, 'resources', signal, (asking) =>
      this.request(id, asking, 'list', (client, options) =>
        offered(client, 'resources', () =>
          client.listResources(undefined, options).then((list) => list.resources),
        ),
      ),
    );
  }

  async listResourceTemplates(id: string, signal?: AbortSignal) {
    return this.list(id, 'templates', signal, (asking) =>
      this.request(id, asking, 'list', (client, options) =>
        offered(client, 'resources', () =>
          client.listResourceTemplates(undefined, options).then((list) => list.resourceTemplates),
        ),
      ),
    );
  }

  /**
   * A server's whole list, reused for `mcp.listCacheMs` after it answered (every team filters it by its own
   * permissions afterwards: mcp-gateway-server.ts), so lists from many clients cost the server one request per
   * interval; requests that find it being asked wait for that answer. A failed list is not kept. The shared request
   * is not tied to one caller's `signal` (its `timeoutMs` bounds it); a caller that leaves stops waiting. `cache`
   * false (the admin page's fresh read): asked now, as before.
   */
  private list<T>(
    id: string,
    kind: ListKind,
    signal: AbortSignal | undefined,
    ask: (signal: AbortSignal | undefined) => Promise<T[]>,
    cache = true,
  ): Promise<T[]> {
    const upstream = this.upstream(id);
    if (!cache || this.listCacheMs === 0) return ask(signal);
    let entry = upstream.lists.get(kind);
    if (!entry || entry.until <= Date.now()) {
      const asked: CachedList = { until: Infinity, items: ask(undefined) };
      upstream.lists.set(kind, asked);
      asked.items.then(
        () => {
          if (upstream.lists.get(kind) === asked) asked.until = Date.now() + this.listCacheMs;
        },
        () => {
          if (upstream.lists.get(kind) === asked) upstream.lists.delete(kind);
        },
      );
      entry = asked;
    }
    return untilAborted(entry.items as Promise<T[]>, signal);
  }

  async readResource(id: string, uri: string, signal?: AbortSignal) {
    return this.request(id, signal, 'read', (client, options) => client.readResource({ uri }, options));
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(
      [...this.upstreams.values()].map(async (upstream) => {
        const client = upstream.client;
        upstream.client = undefined;
        await client?.then((c) => c.close()).catch(() => undefined);
      }),
    );
  }

  /**
   * One request to a server, connecting first if need be, all within its `timeoutMs` (and abandoned when the
   * caller's `signal` fires). What the server answers, an MCP error included, passes through. A failure is the
   * server's (it opens its back-off) or the request's alone (upstream-failures.ts); a connection found lost is
   * dropped, and the request sent again once on a fresh one when that is safe: a list or a read always, a call only
   * when it certainly did not reach the server. While the server is skipped after failing (its circuit open) the
   * request is an UpstreamFailure at once, the server not asked; so is it when `probe` is false and the request
   * would be the probe that ends the back-off (the admin health read never is: mcp-servers.controller.ts).
   */
  private async request<T>(
    id: string,
    signal: AbortSignal | undefined,
    kind: UpstreamRequestKind,
    work: (client: Client, options: { signal: AbortSignal; timeout: number }) => Promise<T>,
    probe = true,
  ): Promise<T> {
    const upstream = this.upstream(id);
    const circuit = upstream.circuit;
    const admitted = circuit.admit();
    const ticket = typeof admitted === 'object' ? admitted : undefined;
    if (ticket && !probe) circuit.released(ticket);
    if (admitted === 'no' || (ticket && !probe))
      throw new UpstreamFailure(id, 'unavailable', circuit.retryAt ?? Date.now());
    let verdict = false;
    const timeoutMs = upstream.config.timeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const bounded = signal ? AbortSignal.any([signal, deadline]) : deadline;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new UpstreamFailure(id, 'timeout')), timeoutMs);
    });
    const options = { signal: bounded, timeout: timeoutMs };
    try {
      for (let attempt = 1; ; attempt++) {
        // A connection that was up and is lost (a local server that exited) is made again at once: its loss alone
        // does not open the circuit; failing to connect again does.
        const reused = upstream.connected;
        const connection = this.client(upstream);
        let phase: UpstreamPhase = 'connecting';
        let checked = false;
        try {
          const client = await Promise.race([connection, expired]);
          phase = 'asking';
          // A local server may be exiting (its last answer sent, its process not yet gone): a call is sent only
          // after it answered a ping on this connection, so a call lost with the process is known not to have run.
          if (kind === 'call' && reused && !upstream.config.url)
            await Promise.race([alive(client, options), expired]);
          checked = true;
          const answer = await Promise.race([work(client, options), expired]);
          this.answered(upstream);
          verdict = true;
          return upstream.redaction.answer(answer);
        } catch (error) {
          // The caller went away: no verdict on the server (nor are its words, unchecked, passed on).
          if (signal?.aborted && !(error instanceof UpstreamFailure))
            throw new McpAnswerError(JsonRpcCode.InternalError, 'The request was cancelled by the client.');
          const answer = this.answerError(upstream, error);
          if (answer) {
            this.answered(upstream);
            verdict = true;
            throw answer;
          }
          const timedOut =
            error instanceof UpstreamFailure ||
            (error instanceof mcpSdk().SdkError && error.code === mcpSdk().SdkErrorCode.RequestTimeout);
          const failure = classifyFailure(error, phase, checked ? kind : 'list', timedOut);
          if (failure.blame === 'request') {
            this.logger.pino.warn(
              { server: id, reason: failure.reason, error: upstream.redaction.kept(messageOf(error)) },
              'MCP request failed',
            );
            throw new UpstreamFailure(id, failure.reason, undefined, true);
          }
          this.note(upstream, failure.reason, error);
          if (failure.reason === 'unavailable') this.drop(upstream, connection);
          const resend =
            failure.lost && reused && attempt === 1 && (kind !== 'call' || failure.unsent || !checked);
          if (resend) continue;
          verdict = true;
          if (failure.lost && reused) {
            if (ticket) circuit.released(ticket);
          } else circuit.failed(ticket);
          throw new UpstreamFailure(id, failure.reason);
        }
      }
    } finally {
      clearTimeout(timer);
      if (ticket && !verdict) circuit.released(ticket);
    }
  }

  /** The server answered (a result or an MCP error of its own): it is up. */
  private answered(upstream: Upstream): void {
    upstream.lastError = null;
    upstream.circuit.succeeded();
    this.metrics.mcpServerUp.set({ server: upstream.id }, 1);
  }

  /**
   * A failed request that is an answer of the server's: its own MCP error as it came, or a list it answered past
   * MAX_PAGES. Else null. The SDK's own errors (SdkError: a timeout, the connection closed, an HTTP failure, an era
   * it could not negotiate) are local, never the server's answer.
   */
  private answerError(upstream: Upstream, error: unknown): McpAnswerError | null {
    const { ProtocolError, SdkError, SdkErrorCode } = mcpSdk();
    // A JSON-RPC error the server answered (an unknown tool, invalid arguments): it is reachable. Its words reach
    // the client, without the credentials the gateway sent it (a server may quote them).
    if (error instanceof ProtocolError)
      return new McpAnswerError(
        error.code,
        upstream.redaction.message(withoutPrefix(error)),
        upstream.redaction.answer(error.data),
      );
    // It answered every page, but there were more than MAX_PAGES of them: reachable, its list refused.
    if (error instanceof SdkError && error.code === SdkErrorCode.ListPaginationExceeded)
      return new McpAnswerError(
        JsonRpcCode.InternalError,
        `MCP server "${upstream.id}" lists more than ${MAX_PAGES} pages.`,
      );
    return null;
  }

  /**
   * A failure kept (last_error) and logged: its message only, redacted and bounded (the error itself is not logged:
   * its message, body or stack may quote the credentials the gateway sent).
   */
  private note(upstream: Upstream, reason: 'unavailable' | 'timeout', error: unknown): void {
    const said = upstream.redaction.kept(messageOf(error));
    upstream.lastError = `${reason}: ${said}`;
    this.metrics.mcpServerErrors.inc({ server: upstream.id, reason });
    this.metrics.mcpServerUp.set({ server: upstream.id }, 0);
    this.logger.pino.warn({ server: upstream.id, reason, error: said }, 'MCP server failed');
  }

  /** Drops the server's connection, when it is still `which` (a request that failed late must not drop a newer one). */
  private drop(upstream: Upstream, which: Promise<Client>): void {
    const client = upstream.client;
    if (client !== which) return;
    upstream.client = undefined;
    upstream.connected = false;
    upstream.generation++;
    void client.then((c) => c.close()).catch(() => undefined);
  }

  private client(upstream: Upstream): Promise<Client> {
    if (!upstream.client) {
      const connecting = this.connect(upstream, ++upstream.generation);
      upstream.client = connecting;
      // A failed connect is not kept: the next request tries again.
      connecting.catch(() => {
        if (upstream.client === connecting) upstream.client = undefined;
      });
    }
    return upstream.client;
  }

  private async connect(upstream: Upstream, generation: number): Promise<Client> {
    // `auto`: a server/discover probe first, 2026-07-28 with a server that serves it, else the 2025 initialize
    // handshake (one more round trip per connection; a local server's probe runs in a short-lived copy of it).
    const client = new (mcpSdk().Client)(GATEWAY_IMPLEMENTATION, {
      capabilities: {},
      versionNegotiation: { mode: 'auto' },
      listMaxPages: MAX_PAGES,
    });
    const transport = this.transportFor(upstream);
    client.onclose = () => {
      // The connection ended (a local server's process exited): the next request connects again.
      if (upstream.generation === generation) {
        upstream.client = undefined;
        upstream.connected = false;
      }
    };
    try {
      await client.connect(transport, { timeout: upstream.config.timeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    upstream.connected = true;
    return client;
  }

  private transportFor(upstream: Upstream): Transport {
    const config = upstream.config;
    if (config.url)
      return new (mcpSdk().StreamableHTTPClientTransport)(new URL(config.url), {
        requestInit: { headers: config.headers ?? {} },
      });
    const transport = new (mcpSdk().StdioClientTransport)({
      command: config.command!,
      args: config.args,
      env: config.env,
      stderr: 'pipe',
    });
    // Its stderr goes to the gateway's log (the operator's), never to a client: line by line, each cut to
    // MAX_LINE_CHARS (a line without a newline would otherwise grow without bound), redacted like its errors, since
    // a server may print the env it was given.
    if (transport.stderr)
      onBoundedLines(transport.stderr as Readable, (line) =>
        this.logger.pino.warn(
          { server: upstream.id, stderr: upstream.redaction.kept(line) },
          'MCP server stderr',
        ),
      );
    return transport;
  }

  private upstream(id: string): Upstream {
    const upstream = this.upstreams.get(id);
    if (!upstream) throw new McpAnswerError(JsonRpcCode.InvalidParams, `Unknown MCP server "${id}".`);
    return upstream;
  }
}

/** What `work` settles to, or the client's cancellation as soon as `signal` fires (the work goes on for others). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  const cancelled = () =>
    new McpAnswerError(JsonRpcCode.InternalError, 'The request was cancelled by the client.');
  if (signal.aborted) return Promise.reject(cancelled());
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(cancelled());
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** Whether the connection still answers: a ping on the 2025 revisions, `server/discover` on 2026-07-28 (no ping). */
function alive(client: Client, options: { signal: AbortSignal; timeout: number }): Promise<unknown> {
  return client.getProtocolEra() === 'modern' ? client.discover(options) : client.ping(options);
}

/**
 * An error's message with its causes' (`fetch failed` alone does not say the connection was refused): each cause
 * that adds something, a few deep. Redacted by the caller like the message.
 */
function messageOf(error: unknown): string {
  if (!isErrorLike(error)) return String(error);
  let text = error.message;
  let cause: unknown = error.cause;
  for (let depth = 0; depth < 3 && isErrorLike(cause); depth++, cause = cause.cause)
    if (!text.includes(cause.message)) text += `: ${cause.message}`;
  return text;
}

/** An Error by its shape: fetch's errors may come from another realm (a test's VM), where instanceof fails. */
function isErrorLike(value: unknown): value is { message: string; cause?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as Error).message === 'string';
}

/**
 * A list of what the server offers, or none without asking it when it does not offer the capability (the SDK's
 * client would answer the same empty list, and say so on the console, outside the gateway's log).
 */
function offered<T>(
  client: Client,
  capability: 'tools' | 'prompts' | 'resources',
  list: () => Promise<T[]>,
): Promise<T[]> {
  return client.getServerCapabilities()?.[capability] ? list() : Promise.resolve([]);
}
