import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import {
  Client,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { AppLogger } from '../common/logging/logger';
import { GatewayConfig, type McpServerConfig } from '../config/config.schema';
import { MetricsService } from '../metrics/metrics.service';

/** The gateway's name as an MCP client of its upstream servers (and as a server to its own clients). */
export const GATEWAY_IMPLEMENTATION = { name: 'switchyard', version: '0.1.0' };

/** A server's list answer has at most this many pages followed (a server that pages forever is an error). */
const MAX_PAGES = 20;

/**
 * The JSON-RPC code of a call a server did not answer in its timeoutMs: -32001, what the 1.x SDK sent for a request
 * timeout (the 2.x SDK keeps timeouts local, as SdkError), so clients see what they saw before.
 */
export const UPSTREAM_TIMEOUT = -32001;

/** How a server stands on this replica, for the console and the admin API. */
export interface UpstreamHealth {
  id: string;
  kind: 'remote' | 'local';
  state: 'connected' | 'not-connected' | 'failing';
  /** The last failure (connecting, listing, calling), null after a success. */
  lastError: string | null;
  /** The tools it listed last (its own names). */
  tools: string[];
}

/**
 * A call could not reach the server (down, refused, its process gone, the connection lost) or it did not answer in
 * its `timeoutMs`: an MCP error to the client, never a hung request. `reason` is `unavailable` or `timeout`.
 */
export class UpstreamFailure extends ProtocolError {
  constructor(
    readonly server: string,
    readonly reason: 'unavailable' | 'timeout',
  ) {
    super(
      reason === 'timeout' ? UPSTREAM_TIMEOUT : ProtocolErrorCode.InternalError,
      reason === 'timeout'
        ? `MCP server "${server}" did not answer in time.`
        : `MCP server "${server}" is unavailable.`,
    );
  }
}

interface Upstream {
  id: string;
  config: McpServerConfig;
  client?: Promise<Client>;
  lastError: string | null;
  connected: boolean;
  tools: ReadonlySet<string>;
  /** Counts connections made, so a connection that ends late cannot clear the one made after it. */
  generation: number;
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

  constructor(
    config: GatewayConfig,
    private readonly logger: AppLogger,
    private readonly metrics: MetricsService,
  ) {
    for (const [id, server] of Object.entries(config.mcp.servers))
      this.upstreams.set(id, {
        id,
        config: server,
        lastError: null,
        connected: false,
        tools: new Set(),
        generation: 0,
      });
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
    }));
  }

  /**
   * Every tool of the server (all its pages). `fresh`: asked now, even when a 2026-07-28 server said its last list
   * may be reused for a while (its `ttlMs`); otherwise such a list is reused until then.
   */
  async listTools(id: string, signal?: AbortSignal, fresh = false) {
    const { tools } = await this.request(id, signal, (client, options) =>
      client.listTools(undefined, { ...options, ...(fresh ? { cacheMode: 'refresh' as const } : {}) }),
    );
    this.upstream(id).tools = new Set(tools.map((tool) => tool.name));
    return tools;
  }

  async callTool(id: string, name: string, args: Record<string, unknown> | undefined, signal?: AbortSignal) {
    return this.request(id, signal, (client, options) => client.callTool({ name, arguments: args }, options));
  }

  async listPrompts(id: string, signal?: AbortSignal) {
    return this.request(id, signal, (client, options) =>
      client.listPrompts(undefined, options).then((list) => list.prompts),
    );
  }

  async getPrompt(id: string, name: string, args: Record<string, string> | undefined, signal?: AbortSignal) {
    return this.request(id, signal, (client, options) =>
      client.getPrompt({ name, arguments: args }, options),
    );
  }

  async listResources(id: string, signal?: AbortSignal) {
    return this.request(id, signal, (client, options) =>
      client.listResources(undefined, options).then((list) => list.resources),
    );
  }

  async listResourceTemplates(id: string, signal?: AbortSignal) {
    return this.request(id, signal, (client, options) =>
      client.listResourceTemplates(undefined, options).then((list) => list.resourceTemplates),
    );
  }

  async readResource(id: string, uri: string, signal?: AbortSignal) {
    return this.request(id, signal, (client, options) => client.readResource({ uri }, options));
  }

  /** Whether the server offers a capability (after connecting); false when it cannot be reached. */
  async offers(id: string, capability: 'tools' | 'prompts' | 'resources'): Promise<boolean> {
    const client = await this.client(this.upstream(id));
    return client.getServerCapabilities()?.[capability] !== undefined;
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
   * caller's `signal` fires). What the server answers, an MCP error included, passes through; not reaching it
   * becomes an UpstreamFailure and drops the connection, so the next request connects afresh.
   */
  private async request<T>(
    id: string,
    signal: AbortSignal | undefined,
    work: (client: Client, options: { signal: AbortSignal; timeout: number }) => Promise<T>,
  ): Promise<T> {
    const upstream = this.upstream(id);
    const timeoutMs = upstream.config.timeoutMs;
    const deadline = AbortSignal.timeout(timeoutMs);
    const bounded = signal ? AbortSignal.any([signal, deadline]) : deadline;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new UpstreamFailure(id, 'timeout')), timeoutMs);
    });
    try {
      const client = await Promise.race([this.client(upstream), expired]);
      const answer = await Promise.race([work(client, { signal: bounded, timeout: timeoutMs }), expired]);
      upstream.lastError = null;
      return answer;
    } catch (error) {
      throw this.failed(upstream, error);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * What a failed request becomes: the server's own MCP error as it came, else an UpstreamFailure. The SDK's own
   * errors (SdkError: a timeout, the connection closed, an HTTP failure, an era it could not negotiate) are local,
   * never the server's answer.
   */
  private failed(upstream: Upstream, error: unknown): Error {
    if (
      error instanceof UpstreamFailure ||
      (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
    ) {
      this.note(upstream, 'timeout', error);
      return error instanceof UpstreamFailure ? error : new UpstreamFailure(upstream.id, 'timeout');
    }
    // A JSON-RPC error the server answered (an unknown tool, invalid arguments): it is reachable.
    if (error instanceof ProtocolError) return error;
    this.note(upstream, 'unavailable', error);
    this.drop(upstream);
    return new UpstreamFailure(upstream.id, 'unavailable');
  }

  private note(upstream: Upstream, reason: 'unavailable' | 'timeout', error: unknown): void {
    upstream.lastError = `${reason}: ${error instanceof Error ? error.message : String(error)}`;
    this.metrics.mcpServerErrors.inc({ server: upstream.id, reason });
    this.logger.pino.warn({ server: upstream.id, reason, err: error }, 'MCP server failed');
  }

  private drop(upstream: Upstream): void {
    const client = upstream.client;
    upstream.client = undefined;
    upstream.connected = false;
    upstream.generation++;
    void client?.then((c) => c.close()).catch(() => undefined);
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
    const client = new Client(GATEWAY_IMPLEMENTATION, {
      capabilities: {},
      versionNegotiation: { mode: 'auto' },
      listMaxPages: MAX_PAGES,
    });
    const transport = this.transportFor(upstream.config);
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

  private transportFor(config: McpServerConfig): Transport {
    if (config.url)
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers ?? {} },
      });
    return new StdioClientTransport({
      command: config.command!,
      args: config.args,
      env: config.env,
      // Its stderr goes to the gateway's own (the operator's log), not to any client.
      stderr: 'inherit',
    });
  }

  private upstream(id: string): Upstream {
    const upstream = this.upstreams.get(id);
    if (!upstream) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown MCP server "${id}".`);
    return upstream;
  }
}
