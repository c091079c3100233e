// A local MCP server for the gateway's tests, spoken to over stdio (docs/mcp.md): built with the official SDK's
// low-level Server and StdioServerTransport, as a real local server is. One tool and one prompt; NOTES_OWNER (set in
// the gateway's config, mcp.servers.<id>.env) shows the environment reached it and nothing else of the gateway's did.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode,
} from '@modelcontextprotocol/sdk/types.js';

// A server that prints the env it was given (its credential) on stderr, as a careless one may.
if (process.env.NOTES_TOKEN) console.error(`notes: starting with token ${process.env.NOTES_TOKEN}`);

const server = new Server({ name: 'notes', version: '1.0.0' }, { capabilities: { tools: {}, prompts: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'read_note',
      description: 'Reads a note by its title',
      inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
    },
    { name: 'crash', description: 'Answers, then the server exits', inputSchema: { type: 'object' } },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name === 'crash') {
    // Exits once the answer is written (stdout drained), as a server that dies between two calls.
    setTimeout(() => process.exit(3), 0);
    return { content: [{ type: 'text', text: `exiting (pid ${process.pid})` }] };
  }
  if (request.params.name !== 'read_note')
    throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}`);
  const title = String(request.params.arguments?.title ?? '');
  const leaked = Object.keys(process.env).filter(
    (name) => name.startsWith('TEST_') || name.startsWith('MCP_'),
  );
  return {
    content: [{ type: 'text', text: `note "${title}" by ${process.env.NOTES_OWNER ?? 'nobody'}` }],
    structuredContent: {
      title,
      owner: process.env.NOTES_OWNER ?? null,
      leakedVariables: leaked,
      pid: process.pid,
    },
  };
});

server.setRequestHandler(ListPromptsRequestSchema, async () => ({
  prompts: [
    { name: 'summarise', description: 'Summarise a note', arguments: [{ name: 'title', required: true }] },
  ],
}));

server.setRequestHandler(GetPromptRequestSchema, async (request) => ({
  messages: [
    {
      role: 'user',
      content: { type: 'text', text: `Summarise the note "${request.params.arguments?.title}".` },
    },
  ],
}));

await server.connect(new StdioServerTransport());
