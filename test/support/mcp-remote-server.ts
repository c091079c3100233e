import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

export interface RemoteMcpOptions {
  /** The bearer token it demands (401 otherwise), as a real hosted server does. */
  token: string;
  /**
   * `hang`: every tools/list and tools/call is left unanswered (a server that is up but stuck). `leaky`: every
   * request after the handshake (a client's server/discover probe, initialize) is answered HTTP 500 with a body
   * quoting the Authorization header it was sent (a server that echoes the credential it was given in its errors;
   * the SDK's client quotes such a body in its error, not the body of a failed probe). `endless-pages`: every page
   * of tools/list names one more page after it.
   */
  behaviour?: 'normal' | 'hang' | 'leaky' | 'endless-pages';
  /**
   * Adds the tools `whoami` (answers with the Authorization header it was sent), `whereami` (with the path and query
   * it was called at) and `reject` (an MCP error quoting the header, in its message and its data).
   */
  echoTools?: boolean;
  /** Adds the tool `slow`, which answers after this many milliseconds (a client may leave meanwhile). */
  slowMs?: number;
  /** Adds the tool `slow`, which never answers (until the server stops): one slow call, the server otherwise well. */
  slowTool?: boolean;
  /** Its resources/list and resources/templates/list answer after this many milliseconds. */
  resourceListMs?: number;
}

/**
 * A remote MCP server for the gateway's tests: the official SDK's low-level Server behind its Streamable HTTP
 * transport (stateless, a server per request, as the SDK documents), checking its own Authorization header. Tools
 * `echo`, `add` and `delete_repo` (the one a team's globs leave out); a resource. It records the Authorization
 * headers it saw, so a test can check the gateway sent its own credential and never the client's token.
 */
export class RemoteMcpServer {
  readonly authorizations: Array<string | undefined> = [];
  readonly calls: Array<{ name: string; arguments: unknown }> = [];
  /** How many tools/list requests reached it. */
  lists = 0;
  /** The resource URIs it was asked to read, in order. */
  readonly reads: string[] = [];
  /** How many resources/list requests reached it. */
  resourceLists = 0;
  private http?: HttpServer;
  private readonly stuck = new Set<() => void>();

  constructor(private readonly options: RemoteMcpOptions) {}

  get url(): string {
    return `http://127.0.0.1:${(this.http!.address() as AddressInfo).port}/mcp`;
  }

  async start(): Promise<this> {
    this.http = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.http!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    for (const release of this.stuck) release();
    this.http?.closeAllConnections();
    await new Promise<void>((resolve) => this.http?.close(() => resolve()) ?? resolve());
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.authorizations.push(req.headers.authorization);
    if (req.headers.authorization !== `Bearer ${this.options.token}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body: unknown = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const method = (body as { method?: unknown } | undefined)?.method;
    const handshake = ['server/discover', 'initialize', 'notifications/initialized'].includes(String(method));
    if (this.options.behaviour === 'leaky' && !handshake) {
      res
        .writeHead(500, { 'content-type': 'text/plain' })
        .end(
          `upstream broke while using credential "${req.headers.authorization}" ${'and so on '.repeat(200)}`,
        );
      return;
    }
    const server = this.server(req.headers.authorization ?? '', req.url ?? '');
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  /** Never answers, until the server stops. */
  private hang(): Promise<never> {
    return new Promise<never>((_, reject) => {
      const release = () => reject(new Error('stopped'));
      this.stuck.add(release);
    });
  }

  private server(authorization: string, path: string): Server {
    const server = new Server(
      { name: 'remote', version: '1.0.0' },
      { capabilities: { tools: {}, resources: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      this.lists++;
      if (this.options.behaviour === 'hang') return this.hang();
      if (this.options.behaviour === 'endless-pages') {
        const page = Number(request.params?.cursor ?? 0);
        const name = `page_${page}`;
        return { tools: [{ name, inputSchema: { type: 'object' as const } }], nextCursor: String(page + 1) };
      }
      return {
        tools: [
          {
            name: 'echo',
            description: 'Answers with the text it is given',
            inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          },
          {
            name: 'add',
            description: 'Adds two numbers',
            inputSchema: {
              type: 'object',
              properties: { a: { type: 'number' }, b: { type: 'number' } },
              required: ['a', 'b'],
            },
          },
          { name: 'delete_repo', description: 'Deletes a repository', inputSchema: { type: 'object' } },
          ...(this.options.echoTools
            ? ['whoami', 'whereami', 'reject'].map((name) => ({
                name,
                inputSchema: { type: 'object' as const },
              }))
            : []),
          ...(this.options.slowMs || this.options.slowTool
            ? [{ name: 'slow', inputSchema: { type: 'object' as const } }]
            : []),
        ],
      };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      this.calls.push({ name: request.params.name, arguments: request.params.arguments });
      if (this.options.behaviour === 'hang') return this.hang();
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      switch (request.params.name) {
        case 'echo':
          return { content: [{ type: 'text', text: String(args.text) }] };
        case 'add':
          if (typeof args.a !== 'number' || typeof args.b !== 'number')
            return { content: [{ type: 'text', text: 'a and b must be numbers' }], isError: true };
          return {
            content: [{ type: 'text', text: String(args.a + args.b) }],
            structuredContent: { sum: args.a + args.b },
          };
        case 'delete_repo':
          return { content: [{ type: 'text', text: 'deleted' }] };
        case 'slow':
          if (this.options.slowTool) return this.hang();
          if (this.options.slowMs) {
            await new Promise((resolve) => setTimeout(resolve, this.options.slowMs));
            return { content: [{ type: 'text', text: 'finally' }] };
          }
          break;
        case 'whoami':
          if (this.options.echoTools)
            return { content: [{ type: 'text', text: `you sent ${authorization}` }] };
          break;
        case 'whereami':
          if (this.options.echoTools) return { content: [{ type: 'text', text: `you called ${path}` }] };
          break;
        case 'reject':
          if (this.options.echoTools)
            throw new McpError(ErrorCode.InvalidRequest, `credential ${authorization} is not enough`, {
              sent: authorization,
            });
          break;
      }
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    });
    const lag = () => new Promise((resolve) => setTimeout(resolve, this.options.resourceListMs ?? 0));
    server.setRequestHandler(ListResourcesRequestSchema, async () => {
      this.resourceLists++;
      await lag();
      return { resources: [{ uri: 'memo://readme', name: 'readme', mimeType: 'text/plain' }] };
    });
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => {
      await lag();
      return {
        resourceTemplates: [{ uriTemplate: 'memo://notes/{name}', name: 'note', mimeType: 'text/plain' }],
      };
    });
    server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
      const uri = request.params.uri;
      this.reads.push(uri);
      const note = /^memo:\/\/notes\/(.+)$/.exec(uri);
      if (uri !== 'memo://readme' && !note)
        throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${uri}`);
      return {
        contents: [{ uri, mimeType: 'text/plain', text: note ? `Note ${note[1]}.` : 'Read me first.' }],
      };
    });
    return server;
  }
}
