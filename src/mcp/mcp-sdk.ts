/* eslint-disable @typescript-eslint/no-require-imports */
import type * as ClientIndex from '@modelcontextprotocol/sdk/client/index.js';
import type * as ClientStdio from '@modelcontextprotocol/sdk/client/stdio.js';
import type * as ClientHttp from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as ServerIndex from '@modelcontextprotocol/sdk/server/index.js';
import type * as ServerHttp from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type * as Types from '@modelcontextprotocol/sdk/types.js';

/** The parts of the official MCP SDK the gateway uses (its client, its server, their transports, its schemas). */
export interface McpSdk {
  Client: typeof ClientIndex.Client;
  StdioClientTransport: typeof ClientStdio.StdioClientTransport;
  StreamableHTTPClientTransport: typeof ClientHttp.StreamableHTTPClientTransport;
  Server: typeof ServerIndex.Server;
  StreamableHTTPServerTransport: typeof ServerHttp.StreamableHTTPServerTransport;
  types: typeof Types;
}

let loaded: McpSdk | undefined;

/**
 * The MCP SDK, loaded on first use (the first request to /mcp or to a server, the first admin health check), never
 * at boot: a gateway without `mcp.servers` never loads it or zod, its schemas' library (a few MB of a process at
 * rest; test/unit/boot-footprint.spec.ts). Synchronous: the SDK's 1.x line is CommonJS, and its first load costs
 * one request a few milliseconds. Everything else imports the SDK for types only.
 */
export function mcpSdk(): McpSdk {
  loaded ??= {
    Client: (require('@modelcontextprotocol/sdk/client/index.js') as typeof ClientIndex).Client,
    StdioClientTransport: (require('@modelcontextprotocol/sdk/client/stdio.js') as typeof ClientStdio)
      .StdioClientTransport,
    StreamableHTTPClientTransport: (
      require('@modelcontextprotocol/sdk/client/streamableHttp.js') as typeof ClientHttp
    ).StreamableHTTPClientTransport,
    Server: (require('@modelcontextprotocol/sdk/server/index.js') as typeof ServerIndex).Server,
    StreamableHTTPServerTransport: (
      require('@modelcontextprotocol/sdk/server/streamableHttp.js') as typeof ServerHttp
    ).StreamableHTTPServerTransport,
    types: require('@modelcontextprotocol/sdk/types.js') as typeof Types,
  };
  return loaded;
}
