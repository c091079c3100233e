import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';

export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
  /** The body's text exactly as it arrived. */
  text: string;
}

/** The HTTP plumbing every stand-in vendor server shares: listen, record requests, stop. */
export abstract class StandInServer {
  readonly requests: RecordedRequest[] = [];
  /** What made a handler throw (see receive): a test that drives odd bodies through expects none. */
  readonly crashes: string[] = [];
  private server?: Server;
  private readonly sockets = new Set<Socket>();

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
      body: JSON.parse(text || '{}'),
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
