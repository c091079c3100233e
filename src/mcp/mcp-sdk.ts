/* eslint-disable @typescript-eslint/no-require-imports */
import type * as ClientPackage from '@modelcontextprotocol/client';
import type * as ClientStdio from '@modelcontextprotocol/client/stdio';
import type * as ServerPackage from '@modelcontextprotocol/server';

/**
 * The parts of the official MCP SDK (its v2 packages) the gateway uses: the client it reaches its servers with and
 * its transports, the server it answers /mcp with and its HTTP entries, and the error classes it tells apart.
 */
export interface McpSdk {
  Client: typeof ClientPackage.Client;
  StreamableHTTPClientTransport: typeof ClientPackage.StreamableHTTPClientTransport;
  StdioClientTransport: typeof ClientStdio.StdioClientTransport;
  /** A JSON-RPC error a peer answered (brand-checked: the client's and the server's copies match each other's). */
  ProtocolError: typeof ClientPackage.ProtocolError;
  /** An error of the SDK's own, never a peer's answer (a timeout, the connection closed, an HTTP failure). */
  SdkError: typeof ClientPackage.SdkError;
  SdkErrorCode: typeof ClientPackage.SdkErrorCode;
  Server: typeof ServerPackage.Server;
  createMcpHandler: typeof ServerPackage.createMcpHandler;
  isLegacyRequest: typeof ServerPackage.isLegacyRequest;
  WebStandardStreamableHTTPServerTransport: typeof ServerPackage.WebStandardStreamableHTTPServerTransport;
}

let loaded: McpSdk | undefined;

/**
 * The MCP SDK, loaded on first use (the first request to /mcp or to a server, the first admin health check), never
 * at boot: a gateway without `mcp.servers` never loads it or zod, its schemas' library (a few MB of a process at
 * rest; test/unit/boot-footprint.spec.ts). Synchronous: the v2 packages ship a CommonJS build beside their ES
 * modules, and their first load costs one request a few milliseconds. Everything else imports the SDK for types
 * only.
 */
export function mcpSdk(): McpSdk {
  if (loaded) return loaded;
  const client = require('@modelcontextprotocol/client') as typeof ClientPackage;
  const server = require('@modelcontextprotocol/server') as typeof ServerPackage;
  loaded = {
    Client: client.Client,
    StreamableHTTPClientTransport: client.StreamableHTTPClientTransport,
    StdioClientTransport: (require('@modelcontextprotocol/client/stdio') as typeof ClientStdio)
      .StdioClientTransport,
    ProtocolError: client.ProtocolError,
    SdkError: client.SdkError,
    SdkErrorCode: client.SdkErrorCode,
    Server: server.Server,
    createMcpHandler: server.createMcpHandler,
    isLegacyRequest: server.isLegacyRequest,
    WebStandardStreamableHTTPServerTransport: server.WebStandardStreamableHTTPServerTransport,
  };
  return loaded;
}
