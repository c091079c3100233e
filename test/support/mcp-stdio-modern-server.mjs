// A local MCP server of the 2026-07-28 era for the gateway's tests, spoken to over stdio: the official v2 SDK's
// McpServer behind serveStdio, refusing a 2025-era opening (initialize), so only a client that negotiated 2026-07-28
// with it gets an answer. Its one tool says which era and revision the call came in.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

serveStdio(
  ({ era }) => {
    const server = new McpServer({ name: 'nearby', version: '2.0.0' }, { capabilities: { tools: {} } });
    server.registerTool('era', { description: 'Says which protocol era the call came in' }, (ctx) => ({
      content: [{ type: 'text', text: era }],
      structuredContent: {
        era,
        revision: ctx.mcpReq.envelope?.['io.modelcontextprotocol/protocolVersion'] ?? null,
      },
    }));
    return server;
  },
  { legacy: 'reject' },
);
