import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  createMcpHandler,
  fromJsonSchema,
  McpServer,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';

/**
 * A remote MCP server of the 2026-07-28 era for the gateway's tests: the official v2 SDK's McpServer behind its
 * createMcpHandler (stateless; 2025-era requests are refused, so a client that does not speak 2026-07-28 to it
 * fails), checking its own Authorization header. Tools `shout` and `forecast`, whose `region` argument the spec's
 * `x-mcp-header` mirrors into an `Mcp-Param-Region` header the SDK checks (so a call the client sent without
 * mirroring it is refused). It records each request's method and the revision it came with.
 */
export class ModernMcpServer {
  readonly authorizations: Array<string | undefined> = [];
  /** Every request: its JSON-RPC method and its MCP-Protocol-Version header. */
  readonly requests: Array<{ method: string | undefined; revision: string | undefined }> = [];
  readonly calls: Array<{ name: string; arguments: unknown }> = [];
  private http?: HttpServer;
  private readonly handler: McpHttpHandler;

  constructor(private readonly token: string) {
    this.handler = createMcpHandler(() => this.server(), { legacy: 'reject' });
  }

  get url(): string {
    return `http://127.0.0.1:${(this.http!.address() as AddressInfo).port}/mcp`;
  }

  async start(): Promise<this> {
    this.http = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.http!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    await this.handler.close();
    this.http?.closeAllConnections();
    await new Promise<void>((resolve) => this.http?.close(() => resolve()) ?? resolve());
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.authorizations.push(req.headers.authorization);
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const parsed = body ? (JSON.parse(body) as { method?: string }) : undefined;
    this.requests.push({
      method: parsed?.method,
      revision: req.headers['mcp-protocol-version'] as string | undefined,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value);
    const answer = await this.handler.fetch(
      new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers,
        ...(body ? { body } : {}),
      }),
    );
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (answer.body) await pipeline(Readable.fromWeb(answer.body), res).catch(() => undefined);
    else res.end();
  }

  private server(): McpServer {
    const server = new McpServer({ name: 'modern', version: '2.0.0' }, { capabilities: { tools: {} } });
    server.registerTool(
      'shout',
      {
        description: 'Answers with the text it is given, in capitals',
        inputSchema: fromJsonSchema<{ text: string }>({
          type: 'object',
          properties: { text: { type: 'string' } },
          required: ['text'],
        }),
      },
      ({ text }) => {
        this.calls.push({ name: 'shout', arguments: { text } });
        return { content: [{ type: 'text', text: text.toUpperCase() }] };
      },
    );
    server.registerTool(
      'forecast',
      {
        description: "A region's weather",
        inputSchema: fromJsonSchema<{ region: string }>({
          type: 'object',
          // The spec's annotation, not in the SDK's JSON Schema type.
          properties: { region: { type: 'string', ...{ 'x-mcp-header': 'Region' } } },
          required: ['region'],
        }),
      },
      ({ region }) => {
        this.calls.push({ name: 'forecast', arguments: { region } });
        return { content: [{ type: 'text', text: `${region}: sunny` }] };
      },
    );
    return server;
  }
}
